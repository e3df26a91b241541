"""The operator registry: each op registers itself once, from its own module in codegen/ops/.

An op class carries everything Kiln knows about one operator: its attribute schema with
defaults, its fusion kind, shape/dtype inference, a numpy reference, and the lowering that
picks a C kernel template. Nothing else in Kiln switches on op names.
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from codegen.errors import KilnError

if TYPE_CHECKING:
    from codegen.ir.graph import Graph, Node
    from codegen.ir.types import Value
    from codegen.ops.request import Lowering


class OpKind(enum.Enum):
    """TVM's classification, read by the fusion planner (never op names)."""

    ELEMENTWISE = "elementwise"
    BROADCAST = "broadcast"
    INJECTIVE = "injective"
    REDUCTION = "reduction"
    OUT_ELEMWISE_FUSABLE = "out-elementwise-fusable"
    OPAQUE = "opaque"


class Op:
    """Base of every operator. Subclasses set the class variables and override the hooks."""

    name: ClassVar[str]
    kind: ClassVar[OpKind]
    # Attribute names and defaults; a node may only carry these attributes.
    attributes: ClassVar[dict[str, Any]] = {}
    # Number of inputs accepted (min, max); optional inputs may be ''.
    arity: ClassVar[tuple[int, int]] = (1, 1)
    # Kernel template stems (templates/kernels/<variant>/<stem>.c.j2) this op can lower to.
    kernels: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def infer(cls, node: "Node", ins: list["Value | None"]) -> list[tuple[str, tuple[int, ...]]]:
        """(dtype, shape) of each output, from the input values. Raise KilnError if invalid."""
        raise NotImplementedError

    @classmethod
    def reference(cls, node: "Node", args: list[np.ndarray | None], g: "Graph") -> list[np.ndarray]:
        """Numpy reference: the outputs for these input arrays (int8 bit-exact with TFLM)."""
        raise NotImplementedError

    @classmethod
    def check(cls, node: "Node", g: "Graph") -> None:
        """Raise KilnError when this node's dtypes/attributes have no kernel (default: accept)."""

    @classmethod
    def macs(cls, node: "Node", g: "Graph") -> int:
        """Multiply-accumulates one execution performs (0 for data movement)."""
        return 0

    @classmethod
    def lower(cls, node: "Node", ctx: "Lowering") -> None:
        """Emit kernel calls (or an alias) for this node into `ctx`."""
        raise NotImplementedError


_REGISTRY: dict[str, type[Op]] = {}
_LOADED = False


def register(cls: type[Op]) -> type[Op]:
    """Class decorator that adds an op to the registry under `cls.name`."""
    if cls.name in _REGISTRY:
        raise ValueError(f"op {cls.name} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    """Import every op module once (an op module imported directly registers only itself)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import codegen.ops as pkg

    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if mod.name not in ("registry", "common"):
            importlib.import_module(f"codegen.ops.{mod.name}")


def get_op(name: str) -> type[Op]:
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KilnError(f"no Kiln operator '{name}'") from None


def all_ops() -> dict[str, type[Op]]:
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def node_attrs(op: type[Op], given: dict[str, Any], node_name: str) -> dict[str, Any]:
    """The node's full attribute dict: defaults filled in, unknown names refused."""
    unknown = sorted(set(given) - set(op.attributes))
    if unknown:
        raise KilnError(f"{op.name} has no attribute(s) {', '.join(unknown)}", node=node_name)
    return {**op.attributes, **given}
