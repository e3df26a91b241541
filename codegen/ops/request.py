"""What an op's lowering asks for: a kernel request, which says what to compute, not how.

The op names the computation by its reference kernel (`conv2d_s8`: the stem of
templates/kernels/reference/conv2d_s8.c.j2, which defines what the computation is) and gives
its semantic fields (geometry, dtypes, attributes) and, for the kernels whose arguments are
the graph's tensors as they are, those arguments. Which kernel variant runs it, how its
constants are repacked and what its typed parameter block holds is decided by the kernel
registry (codegen/kernels/: `select` and each spec's `prepare`), never by the op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Protocol

import numpy as np

from codegen.ir.graph import Graph, Node

if TYPE_CHECKING:
    from codegen.targets import Target


@dataclass(frozen=True, eq=False)
class ConstArray:
    """A constant array placed in flash (`const`), named `<model>_<name>` in the C output."""

    name: str
    dtype: str
    data: np.ndarray  # 1-D, already in the layout the kernel reads

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)


@dataclass(frozen=True)
class TensorArg:
    """A graph value passed to a kernel: resolved to an arena slice, a user buffer or a constant."""

    value: str


@dataclass(frozen=True)
class ScratchArg:
    """A kernel-private scratch buffer of `nbytes`, live only during its call."""

    nbytes: int


Arg = TensorArg | ConstArray | ScratchArg
# A parameter of a kernel's `const` params struct: int, float, bool, a constant array (pointer)
# or a tuple of ints (a small fixed-size array field such as dims[4]).
ParamValue = int | float | bool | ConstArray | tuple[int, ...]


@dataclass(frozen=True, eq=False)
class KernelRequest:
    kernel: str  # the computation, named as its reference kernel: "conv2d_s8", "softmax_f32"
    node: Node
    params: Mapping[str, Any]  # semantic fields: geometry, attributes, precomputed constants
    args: tuple = ()  # kernel arguments (graph tensors, constants, scratch), when the op gives them
    headers: tuple[str, ...] = ()  # runtime headers the computation needs ("math.h", "kiln_quant.h")
    part: str | None = None  # names the call when a node needs several
    # A kernel generated per call site (a fused chain, a specialised tree walk): `kernel` is the
    # instance's name ("fused_elementwise_f32_3f1a..."), `template` the template stem it renders
    # with `template_vars`; None for a fixed kernel, whose template is `kernel`.
    template: str | None = None
    template_vars: tuple = field(default=())
    # out[i] computed from element i of each same-shaped input only: the kernel may write its
    # output over such an input (codegen/kernels/inplace.py declares it for the planner)
    elementwise: bool = False

    @property
    def stem(self) -> str:
        """The template stem (and registry key) of the computation."""
        return self.template or self.kernel


class Lowering(Protocol):
    """What an op's `lower` may use of the lowering context (codegen/lower/context.py): the
    graph and target, tensors and constants as kernel arguments, requests, and views."""

    g: Graph
    target: "Target"
    optimize: str

    def cname(self, node: Node) -> str: ...
    def constant(self, node: Node, role: str, data: Any, dtype: str) -> ConstArray: ...
    def tensor(self, name: str) -> TensorArg | ConstArray: ...
    def request(self, request: KernelRequest) -> Any: ...
    def is_io(self, name: str) -> bool: ...
    def alias(self, out: str, source: str) -> bool: ...
    def root(self, name: str) -> str: ...
