"""LeakyRelu: x, or alpha * x below 0 (ONNX LeakyRelu, TFLite LEAKY_RELU); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class LeakyRelu(FloatUnaryOp):
    name = "LeakyRelu"
    kernels = ("leaky_relu_f32",)
    attributes = {"alpha": 0.01}

    @classmethod
    def fn(cls, node, x):
        a, b = cls.c_params(node)
        return np.where(x < 0, np.float32(a) * x, x)

    @classmethod
    def c_params(cls, node):
        return float(node.attrs['alpha']), float(0.0)
