"""Maximum: the larger of a and b with broadcasting (ONNX Max, a chain for more than two
inputs; TFLite MAXIMUM); float32 and the integer types. NaN in either float input gives
NaN, as numpy.maximum does. int8 inputs and output must share one quantization.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BroadcastBinaryOp, kernel_names
from codegen.ops.registry import register


@register
class Maximum(BroadcastBinaryOp):
    name = "Maximum"
    dtypes = ("float32", *INTEGERS)
    kernels = kernel_names("maximum", dtypes)
    kernel_stem = "maximum"
    numpy_fn = staticmethod(np.maximum)
