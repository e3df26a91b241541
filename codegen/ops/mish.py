"""Mish: x * tanh(softplus(x)) (ONNX Mish); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Mish(FloatUnaryOp):
    name = "Mish"
    kernels = ("mish_f32",)

    @classmethod
    def fn(cls, node, x):
        return x * np.tanh(np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))))
