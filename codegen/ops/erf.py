"""Erf: the error function (ONNX Erf); C99 erff; float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

from codegen.ops.float_unary import FloatUnaryOp, erf
from codegen.ops.registry import register


@register
class Erf(FloatUnaryOp):
    name = "Erf"
    kernels = ("erf_f32",)

    @classmethod
    def fn(cls, node, x):
        return erf(x)
