"""Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (ONNX Celu); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Celu(FloatUnaryOp):
    name = "Celu"
    kernels = ("celu_f32",)
    attributes = {"alpha": 1.0}

    @classmethod
    def fn(cls, node, x):
        a, b = cls.c_params(node)
        return np.maximum(x, 0) + np.minimum(0, np.float32(a) * np.expm1(x / np.float32(a)))

    @classmethod
    def c_params(cls, node):
        return float(node.attrs['alpha']), float(0.0)
