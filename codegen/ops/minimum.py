"""Minimum: the smaller of a and b with broadcasting (ONNX Min, a chain for more than two
inputs; TFLite MINIMUM); float32 and the integer types. NaN in either float input gives
NaN, as numpy.minimum does. int8 inputs and output must share one quantization.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BroadcastBinaryOp, kernel_names
from codegen.ops.registry import register


@register
class Minimum(BroadcastBinaryOp):
    name = "Minimum"
    dtypes = ("float32", *INTEGERS)
    kernels = kernel_names("minimum", dtypes)
    kernel_stem = "minimum"
    numpy_fn = staticmethod(np.minimum)
