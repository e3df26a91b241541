"""MaxPool2D: maximum over each window (padded positions never win).

TFLite MAX_POOL_2D and ONNX MaxPool (the ONNX frontend wraps the NCHW op in transposes).
float32, int8 and int16 compute the same thing (TFLM reference MaxPool): the largest input under
the window, then the fused activation clamp; int8 and int16 keep the input's quantization.
"""

import numpy as np

from codegen.ops.common import apply_float_activation
from codegen.ops.pool2d import Pool2D, pool_windows
from codegen.ops.registry import register


@register
class MaxPool2D(Pool2D):
    name = "MaxPool2D"
    kernels = ("max_pool2d_f32", "max_pool2d_s8", "max_pool2d_s16")
    kernel_stem = "max_pool2d"

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        integer = x.dtype in (np.int8, np.int16)
        lowest = np.iinfo(x.dtype).min if integer else np.finfo(np.float32).min
        values, _ = pool_windows(x, node, lowest)  # padding holds the lowest value
        best = values[0]
        for v in values[1:]:
            best = np.maximum(best, v)
        if integer:
            lo, hi = cls.int8_activation_range(node, g)
            return [np.clip(best, lo, hi).astype(x.dtype)]
        return [apply_float_activation(best.astype(np.float32), node)]
