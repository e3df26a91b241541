"""Maximum: the larger of a and b with broadcasting (ONNX Max, a chain for more than two
inputs; TFLite MAXIMUM); float32 and the integer types. NaN in either float input gives
NaN, as numpy.maximum does. int8 inputs and output must share one quantization.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BroadcastBinaryOp
from codegen.ops.registry import register


@register
class Maximum(BroadcastBinaryOp):
    name = "Maximum"
    kernels = ("maximum_f32", "maximum_i8", "maximum_u8", "maximum_i16", "maximum_i32", "maximum_i64")
    dtypes = ("float32", *INTEGERS)
    kernel_stem = "maximum"
    numpy_fn = staticmethod(np.maximum)
