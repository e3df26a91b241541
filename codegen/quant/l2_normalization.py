"""int8 L2Normalization exactly as TFLite Micro computes it (reference_integer_ops::L2Normalization).

Per row of the last axis: the sum of squares of (x - input zero point) in int32, its inverse
square root by GetInvSqrtQuantizedMultiplierExp (Newton-Raphson in Q3.28), and each
(x - zero point) multiplied by it into Q0.7, clamped to int8. TFLM writes that value whatever
the output tensor's quantization says (its kernel neither reads the output scale nor adds
the output zero point); Kiln writes the same bytes. runtime_c/kiln_l2norm.h mirrors it in C.
"""

from __future__ import annotations

import numpy as np

from .fixedpoint import clamp, multiply_by_quantized_multiplier, wrap_int32
from .gemmlowp_math import inv_sqrt_quantized_multiplier_exp

OUTPUT_FRACTION_BITS = 7  # TFLM's kOutputScale: the result is value * 2**7


def l2_normalization_int8(x, input_zero_point: int) -> np.ndarray:
    """reference_integer_ops::L2Normalization over the last axis of int8 `x`."""
    v = np.asarray(x, np.int64) - int(input_zero_point)
    acc = wrap_int32((v * v).sum(axis=-1, keepdims=True))
    multiplier, shift = inv_sqrt_quantized_multiplier_exp(acc)
    out = multiply_by_quantized_multiplier(v, multiplier, shift.astype(np.int64) + OUTPUT_FRACTION_BITS)
    return clamp(out, -128, 127).astype(np.int8)
