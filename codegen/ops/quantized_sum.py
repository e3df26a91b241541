"""QuantizedSum: TFLite SUM on int8 and int16, TFLM's QuantizedMeanOrSum with compute_sum: the
int32 sum of the raw inputs over `axes`, minus zero_point * count, rescaled once by
QuantizeMultiplier(s_in / s_out) (no 1/count folded in, unlike Mean), plus the output zero
point, saturated to the type. The Mean kernels (mean_s8, mean_s16) run it with that multiplier.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.common import require_dtypes
from codegen.ops.mean import Mean
from codegen.ops.registry import register
from codegen.quant import quantize_multiplier


@register
class QuantizedSum(Mean):
    name = "QuantizedSum"
    kernels = ("mean_s8", "mean_s16")

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8", "int16"))
        super().check(node, g)

    @classmethod
    def quantized_multiplier(cls, input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
        return quantize_multiplier(float(np.float32(input_scale)) / float(np.float32(output_scale)))
