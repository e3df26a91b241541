"""Elu: x, or alpha * (exp(x) - 1) below 0 (ONNX Elu, TFLite ELU with alpha 1); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Elu(FloatUnaryOp):
    name = "Elu"
    kernels = ("elu_f32",)
    attributes = {"alpha": 1.0}

    @classmethod
    def fn(cls, node, x):
        a, b = cls.c_params(node)
        return np.where(x < 0, np.float32(a) * np.expm1(x), x)

    @classmethod
    def c_params(cls, node):
        return float(node.attrs['alpha']), float(0.0)
