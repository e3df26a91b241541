"""Swish: x * sigmoid(alpha * x) (ONNX Swish; SiLU with alpha 1); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Swish(FloatUnaryOp):
    name = "Swish"
    kernels = ("swish_f32",)
    attributes = {"alpha": 1.0}

    @classmethod
    def fn(cls, node, x):
        a, b = cls.c_params(node)
        return x / (np.float32(1) + np.exp(-np.float32(a) * x))

    @classmethod
    def c_params(cls, node):
        return float(node.attrs['alpha']), float(0.0)
