"""int8 elementwise kernels of TFLM, bit-exact: Add, Sub, Mul, Div, SquaredDifference, Quantize, Requantize,
Dequantize.

Inputs broadcast with numpy rules (TFLM's broadcasting Add/Sub/Mul apply the same per-element
function, so the result does not depend on how the broadcast is walked). Parameters come from
`params.py`.
"""

from __future__ import annotations

import numpy as np

from .fixedpoint import (clamp, count_leading_sign_bits, multiply_by_quantized_multiplier, rounding_divide_by_pot_wide,
                         saturating_rounding_doubling_high_mul, wrap_int32)
from .gemmlowp_math import get_reciprocal
from .params import AddSubParams, MulParams


def _stored(x) -> type:
    """int16 results for int16 inputs (16-bit Add, Sub, Mul), int8 otherwise."""
    return np.int16 if np.asarray(x).dtype == np.int16 else np.int8


def _common_scale(x1, x2, p: AddSubParams) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs offset, shifted left by p.left_shift and rescaled to their common scale."""
    def scaled(x, offset, multiplier, shift):
        shifted = wrap_int32((np.asarray(x, dtype=np.int64) + offset) << p.left_shift)
        return multiply_by_quantized_multiplier(shifted, multiplier, shift).astype(np.int64)

    return (scaled(x1, p.input1_offset, p.input1_multiplier, p.input1_shift),
            scaled(x2, p.input2_offset, p.input2_multiplier, p.input2_shift))


def _add_sub(x1, x2, p: AddSubParams, sign: int) -> np.ndarray:
    a, b = _common_scale(x1, x2, p)
    raw = wrap_int32(a + sign * b)
    out = multiply_by_quantized_multiplier(raw, p.output_multiplier, p.output_shift)
    return clamp(out.astype(np.int64) + p.output_offset, p.activation_min,
                 p.activation_max).astype(_stored(x1))


def add_int8(x1, x2, params: AddSubParams) -> np.ndarray:
    """reference_integer_ops AddFunc: rescale both inputs to a common Q(20) scale, sum,
    rescale to the output, clamp to the fused activation."""
    return _add_sub(x1, x2, params, +1)


def sub_int8(x1, x2, params: AddSubParams) -> np.ndarray:
    """reference_ops SubElementwise for int8: as Add with the second term subtracted."""
    return _add_sub(x1, x2, params, -1)


def squared_difference_int8(x1, x2, params: AddSubParams) -> np.ndarray:
    """TFLM's int8 and int16 SquaredDifference: Add's common scale (7 bits of headroom for int8,
    none for int16), the difference squared in int32, rescaled to the output."""
    a, b = _common_scale(x1, x2, params)
    diff = wrap_int32(a - b).astype(np.int64)
    out = multiply_by_quantized_multiplier(wrap_int32(diff * diff), params.output_multiplier, params.output_shift)
    return clamp(out.astype(np.int64) + params.output_offset, params.activation_min,
                 params.activation_max).astype(_stored(x1))


def mul_int8(x1, x2, params: MulParams) -> np.ndarray:
    """reference_integer_ops MulElementwise: (x1 - zp1) * (x2 - zp2) rescaled once."""
    prod = ((np.asarray(x1, dtype=np.int64) + params.input1_offset)
            * (np.asarray(x2, dtype=np.int64) + params.input2_offset))
    out = multiply_by_quantized_multiplier(prod, params.output_multiplier, params.output_shift)
    return clamp(out.astype(np.int64) + params.output_offset, params.activation_min,
                 params.activation_max).astype(_stored(x1))


def div_int8(x1, x2, params: MulParams) -> np.ndarray:
    """reference_ops DivElementwise for int8: the divisor made positive (both signs flipped),
    its reciprocal from GetReciprocal, the dividend shifted by its headroom and multiplied by
    it, then one rescale whose right shift may pass 31 bits for tiny quotients
    (rounding_divide_by_pot_wide). A zero divisor gives what the reference build gives."""
    n = np.asarray(x1, dtype=np.int64) + params.input1_offset
    d = np.asarray(x2, dtype=np.int64) + params.input2_offset
    n, d = np.where(d < 0, -n, n), np.abs(d)
    inv, recip_shift = get_reciprocal(d, 31)
    headroom = count_leading_sign_bits(n).astype(np.int64)
    quotient = saturating_rounding_doubling_high_mul(wrap_int32(n << headroom), inv)
    right = headroom + recip_shift - params.output_shift  # >= 0 (params.MAX_DIV_SHIFT)
    out = rounding_divide_by_pot_wide(saturating_rounding_doubling_high_mul(quotient, params.output_multiplier), right)
    return clamp(out.astype(np.int64) + params.output_offset, params.activation_min,
                 params.activation_max).astype(np.int8)


def round_half_away_f32(v) -> np.ndarray:
    """C `roundf` on float32 values, exactly (returns float64 holding the integers)."""
    v = np.asarray(v, dtype=np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf for infinite inputs; result stays inf
        mag = np.floor(np.abs(v))
        mag = mag + (np.abs(v) - mag >= 0.5)
    return np.copysign(mag, v)


def quantize_float_to_int8(x, scale: float, zero_point: int) -> np.ndarray:
    """reference_ops::AffineQuantize to int8: roundf(x / scale) + zero_point, clamped, with
    the division in float32. Out-of-range and NaN inputs saturate (+inf -> 127, NaN -> -128)
    instead of reproducing the undefined float-to-int conversion of the C++ code."""
    v = np.asarray(x, dtype=np.float32) / np.float32(scale)
    r = np.clip(round_half_away_f32(v), -1e6, 1e6)
    r = np.where(np.isnan(r), -1e6, r)
    return clamp(r.astype(np.int64) + int(zero_point), -128, 127).astype(np.int8)


def requantize_int8(x, multiplier: int, shift: int, input_zero_point: int,
                    output_zero_point: int) -> np.ndarray:
    """reference_ops::Requantize int8 -> int8 (TFLM QUANTIZE between int8 tensors)."""
    inp = np.asarray(x, dtype=np.int64) - int(input_zero_point)
    out = multiply_by_quantized_multiplier(inp, multiplier, shift).astype(np.int64)
    return clamp(out + int(output_zero_point), -128, 127).astype(np.int8)


def dequantize_int8(x, scale: float, zero_point: int) -> np.ndarray:
    """reference_ops::Dequantize: float32(double(scale) * (x - zero_point)). The product of a
    float32 scale and an int below 2**9 is exact in double, so this equals the float32
    product `scale * (float)(x - zero_point)` that the C runtime computes."""
    diff = np.asarray(x, dtype=np.int64) - int(zero_point)
    return (float(np.float32(scale)) * diff.astype(np.float64)).astype(np.float32)
