"""Maximum: the larger of a and b with broadcasting (ONNX Max, a chain for more than two
inputs; TFLite MAXIMUM); float32. NaN in either input gives NaN, as numpy.maximum does.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BroadcastBinaryOp
from codegen.ops.registry import register


@register
class Maximum(BroadcastBinaryOp):
    name = "Maximum"
    kernels = ("maximum_f32",)
    kernel_stem = "maximum"
    numpy_fn = staticmethod(np.maximum)
