"""Minimum: the smaller of a and b with broadcasting (ONNX Min, a chain for more than two
inputs; TFLite MINIMUM); float32. NaN in either input gives NaN, as numpy.minimum does.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BroadcastBinaryOp
from codegen.ops.registry import register


@register
class Minimum(BroadcastBinaryOp):
    name = "Minimum"
    kernels = ("minimum_f32",)
    kernel_stem = "minimum"
    numpy_fn = staticmethod(np.minimum)
