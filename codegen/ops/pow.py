"""Pow: a raised to b with broadcasting (ONNX Pow; not imported from TFLite); float32, C's powf.

A negative base with a non-integer exponent gives NaN, as in numpy and onnxruntime.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BroadcastBinaryOp
from codegen.ops.registry import register


@register
class Pow(BroadcastBinaryOp):
    name = "Pow"
    kernels = ("pow_f32",)
    kernel_stem = "pow"
    headers = ("math.h",)
    numpy_fn = staticmethod(np.power)
