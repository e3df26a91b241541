"""Selu: gamma * x above 0, gamma * alpha * (exp(x) - 1) otherwise (ONNX Selu); `alpha`
and `gamma` default to the self-normalising constants; float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Selu(FloatUnaryOp):
    name = "Selu"
    kernels = ("selu_f32",)
    attributes = {"alpha": 1.6732631921768188, "gamma": 1.0507010221481323}

    @classmethod
    def fn(cls, node, x):
        a, b = cls.c_params(node)
        return np.where(x > 0, np.float32(b) * x, np.float32(b) * np.float32(a) * np.expm1(x))

    @classmethod
    def c_params(cls, node):
        return float(node.attrs['alpha']), float(node.attrs['gamma'])
