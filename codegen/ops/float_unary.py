"""Elementwise float32 functions of one tensor (Exp, Log, Erf, LeakyRelu, HardSwish, ...).

Each op is its own module with a numpy reference; its C expression of `x` (and the op's
parameters `p->alpha`, `p->beta`) is one macro of templates/kernels/reference/_elementwise_exprs.c.j2,
named as its kernel without `_f32`, which both the op's kernel (the `unary_f32` family) and the
fused elementwise kernel expand. Parameters are float attributes mapped onto `alpha` / `beta`
by `c_params`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind


class FloatUnaryOp(Op):
    """Same shape in and out, float32 only; kernel `<stem>_f32` with math.h."""

    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    attributes: ClassVar[dict] = {}

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        require_dtypes(node, g, ("float32",))

    @classmethod
    def fn(cls, node: Node, x: np.ndarray) -> np.ndarray:
        """The numpy reference on a float32 array (computed in float32 or float64)."""
        raise NotImplementedError

    @classmethod
    def c_params(cls, node: Node) -> tuple[float, float]:
        """(alpha, beta) of the kernel's params struct."""
        return 0.0, 0.0

    @classmethod
    def kernel(cls, node: Node) -> str:
        return cls.kernels[0]

    @classmethod
    def has_params(cls) -> bool:
        """Whether the op's expression reads its parameters (alpha, beta)."""
        return cls.c_params.__func__ is not FloatUnaryOp.c_params.__func__

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        with np.errstate(all="ignore"):
            return [np.asarray(cls.fn(node, x)).astype(np.float32)]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        x = node.inputs[0]
        alpha, beta = cls.c_params(node)
        params = {"n": ctx.g.values[x].size, "alpha": float(alpha), "beta": float(beta)}
        ctx.request(KernelRequest(cls.kernel(node), node, params, headers=("math.h",), elementwise=True))


def erf(x: np.ndarray) -> np.ndarray:
    """The error function elementwise (numpy has none), in float64."""
    import math

    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))
