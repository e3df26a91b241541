"""HardSigmoid: max(0, min(1, alpha * x + beta)) (ONNX HardSigmoid); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class HardSigmoid(FloatUnaryOp):
    name = "HardSigmoid"
    kernels = ("hard_sigmoid_f32",)
    attributes = {"alpha": 0.2, "beta": 0.5}

    @classmethod
    def fn(cls, node, x):
        a, b = cls.c_params(node)
        return np.maximum(0, np.minimum(1, np.float32(a) * x + np.float32(b)))

    @classmethod
    def c_params(cls, node):
        return float(node.attrs['alpha']), float(node.attrs['beta'])
