"""Shrink: x + bias below -lambd, x - bias above lambd, else 0 (ONNX Shrink); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Shrink(FloatUnaryOp):
    name = "Shrink"
    kernels = ("shrink_f32",)
    attributes = {"lambd": 0.5, "bias": 0.0}

    @classmethod
    def fn(cls, node, x):
        a, b = cls.c_params(node)
        return np.where(x < -np.float32(a), x + np.float32(b), np.where(x > np.float32(a), x - np.float32(b), 0))

    @classmethod
    def c_params(cls, node):
        return float(node.attrs['lambd']), float(node.attrs['bias'])
