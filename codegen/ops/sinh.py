"""Sinh: hyperbolic sine (ONNX Sinh); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Sinh(FloatUnaryOp):
    name = "Sinh"
    kernels = ("sinh_f32",)

    @classmethod
    def fn(cls, node, x):
        return np.sinh(x)
