"""AveragePool2D: mean over each window, padded positions excluded from the count.

TFLite AVERAGE_POOL_2D and ONNX AveragePool with count_include_pad=0 (the ONNX frontend
wraps the NCHW op in transposes). float32 sums the window row by row and divides by the
count of inside positions; int8 and int16 are TFLM reference_integer_ops::AveragePool: an int32 window
sum, divided by the count rounding half away from zero, clamped to the fused activation,
with the output quantized like the input.
"""

import numpy as np

from codegen.ops.common import apply_float_activation
from codegen.ops.pool2d import Pool2D, pool_windows
from codegen.ops.registry import register
from codegen.quant import rounding_average


@register
class AveragePool2D(Pool2D):
    name = "AveragePool2D"
    kernels = ("average_pool2d_f32", "average_pool2d_s8", "average_pool2d_s16")
    kernel_stem = "average_pool2d"
    s8_headers = ("kiln_fixedpoint.h",)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        values, masks = pool_windows(x, node, 0)
        count = np.sum(np.broadcast_arrays(*masks), axis=0, dtype=np.int64)
        if x.dtype in (np.int8, np.int16):
            acc = np.zeros(values[0].shape, np.int64)
            for v, m in zip(values, masks):
                acc += np.where(m, v.astype(np.int64), 0)
            lo, hi = cls.int8_activation_range(node, g)
            return [np.clip(rounding_average(acc, count), lo, hi).astype(x.dtype)]
        total = np.zeros(values[0].shape, np.float32)
        for v, m in zip(values, masks):  # one window position at a time, as the C kernel adds
            total = np.where(m, total + v, total).astype(np.float32)
        return [apply_float_activation((total / count.astype(np.float32)).astype(np.float32), node)]
