"""HardSwish: x * max(0, min(1, x / 6 + 1/2)) (ONNX HardSwish, TFLite HARD_SWISH); float32.

The kernel is the `unary_f32` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import register


@register
class HardSwish(FloatUnaryOp):
    name = "HardSwish"
    kernels = ("hard_swish_f32",)

    @classmethod
    def fn(cls, node, x):
        return x * np.maximum(0, np.minimum(1, x * np.float32(1 / 6) + np.float32(0.5)))
