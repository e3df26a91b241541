"""Softplus: log(1 + exp(x)) (ONNX Softplus), in the form that does not overflow:
max(x, 0) + log1p(exp(-|x|)); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class Softplus(FloatUnaryOp):
    name = "Softplus"
    kernels = ("softplus_f32",)

    @classmethod
    def fn(cls, node, x):
        return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))
