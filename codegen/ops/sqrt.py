"""Sqrt: square root (ONNX Sqrt); NaN below 0; float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Sqrt(FloatUnaryOp):
    name = "Sqrt"
    kernels = ("sqrt_f32",)

    @classmethod
    def fn(cls, node, x):
        return np.sqrt(x)
