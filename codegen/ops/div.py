"""Div: a / b with broadcasting (ONNX Div, TFLite DIV); float32, IEEE division (x / 0 is ±inf).

ONNX Div by a constant becomes a Mul by its reciprocal in the frontend only when that is
exact (a power of two); any other divisor runs this kernel, so results round as ONNX's do.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BroadcastBinaryOp
from codegen.ops.registry import register


@register
class Div(BroadcastBinaryOp):
    name = "Div"
    kernels = ("div_f32",)
    kernel_stem = "div"
    numpy_fn = staticmethod(np.divide)
