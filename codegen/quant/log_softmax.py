"""int8 LogSoftmax exactly as TFLite Micro computes it (log_softmax.cc Prepare and
reference_ops::LogSoftmaxQuantized).

Per row of the last axis: the differences to the row maximum scaled to Q5.26, the sum of
their exps in Q12.19 (as Softmax), its log by TFLM's log_x_for_x_greater_than_or_equal_to_1
(a rational approximation around powers of sqrt(2)), and each output is
(diff - log(sum)) in Q5.26 rounded to the fixed output format: scale 16/256, zero point 127.
runtime_c/kiln_log_softmax.h mirrors it in C.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KilnError
from . import gemmlowp_math as gm
from .activations import ACCUMULATION_INTEGER_BITS, SCALED_DIFF_INTEGER_BITS, softmax_params
from .fixedpoint import (INT32_MAX, INT32_MIN, add_wrap, clamp, count_leading_zeros_u32,
                         multiply_by_quantized_multiplier, rounding_divide_by_pot, rounding_half_sum,
                         saturating_rounding_doubling_high_mul as mul, sub_wrap)
from .params import quantize_multiplier

OUTPUT_SCALE = 16 / 256  # the only int8 output format TFLM's LOG_SOFTMAX accepts
OUTPUT_ZERO_POINT = 127
_OUTPUT_INTEGER_BITS = 4

# Q0.31 constants of log_x_for_x_greater_than_or_equal_to_1.
_LOG_2 = 1488522236
_SQRT_SQRT_HALF = 1805811301
_SQRT_HALF = 1518500250
_ONE_QUARTER = 536870912
_ALPHA_N = 117049297
_ALPHA_D = 127690142
_ALPHA_I = 1057819769
_ALPHA_F = 638450708


@dataclass(frozen=True)
class LogSoftmaxParams:
    """Constants of TFLM's int8 LogSoftmax (LogSoftmaxOpData)."""

    input_multiplier: int
    input_left_shift: int
    reverse_scaling_divisor: int
    reverse_scaling_right_shift: int
    diff_min: int


def log_softmax_params(input_scale: float) -> LogSoftmaxParams:
    """TFLM PreprocessLogSoftmaxScalingExp with beta 1 and 5 integer bits: Softmax's input
    scaling, and the reverse of it, 2**(31 - left shift) / multiplier, as a multiplier below one."""
    sp = softmax_params(1.0, input_scale)
    divisor, shift = quantize_multiplier((1 << (31 - sp.input_left_shift)) / float(sp.input_multiplier))
    if shift > 0:
        raise KilnError(f"LOG_SOFTMAX: input scale {input_scale!r} leaves a reverse scaling of 1 or more "
                        "(TFLM requires it below one)")
    return LogSoftmaxParams(sp.input_multiplier, sp.input_left_shift, divisor, -shift, sp.diff_min)


def _shift_left_saturating(x, exponent) -> np.ndarray:
    """TFLM SaturatingRoundingMultiplyByPOTParam for exponents >= 0 given per element."""
    x, e = np.broadcast_arrays(np.asarray(x, np.int64), np.asarray(exponent, np.int64))
    threshold = (np.int64(1) << (31 - np.maximum(e, 1))) - 1
    shifted = np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << e))
    return np.where(e == 0, x, shifted).astype(np.int32)


def _saturating(v) -> np.ndarray:
    return np.clip(np.asarray(v, np.int64), INT32_MIN, INT32_MAX).astype(np.int32)


def log_x_ge_1(z, input_integer_bits: int = ACCUMULATION_INTEGER_BITS,
               output_integer_bits: int = SCALED_DIFF_INTEGER_BITS) -> np.ndarray:
    """TFLM log_x_for_x_greater_than_or_equal_to_1_impl: log(z) for z >= 1 in
    Q`input_integer_bits`, as a raw value in Q`output_integer_bits`."""
    accum_bits = output_integer_bits + 1
    z = np.asarray(z, np.int64)
    shifted_quarter = rounding_divide_by_pot(_ONE_QUARTER, accum_bits).astype(np.int64)
    hp1 = count_leading_zeros_u32(z).astype(np.int64)
    r_a = _shift_left_saturating(mul(_shift_left_saturating(z, hp1 - 1), _SQRT_HALF), 1)
    z_a_pow_2_adj = _saturating(_shift_left_saturating(input_integer_bits - hp1, 31 - accum_bits).astype(np.int64)
                                + shifted_quarter)
    z_b_headroom = count_leading_zeros_u32(mul(z, _SQRT_HALF)).astype(np.int64) - 1
    r_b = _shift_left_saturating(z, z_b_headroom)
    z_b_pow_2_adj = _saturating(_shift_left_saturating(input_integer_bits - z_b_headroom, 31 - accum_bits)
                                .astype(np.int64) - shifted_quarter)
    r = np.minimum(r_a, r_b)
    z_pow_2_adj = np.maximum(z_a_pow_2_adj, z_b_pow_2_adj)
    p = rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = sub_wrap(r, _SQRT_SQRT_HALF)
    q = add_wrap(q, q)
    common_sq = mul(q, q)
    num = add_wrap(mul(q, r), mul(mul(q, common_sq), _ALPHA_N))
    denom_minus_one = add_wrap(mul(p, add_wrap(add_wrap(_ALPHA_I, q), mul(_ALPHA_D, common_sq))), mul(_ALPHA_F, q))
    recip_denom = gm.one_over_one_plus_x_for_x_in_0_1(denom_minus_one)
    num_scaled = rounding_divide_by_pot(num, accum_bits)
    total = add_wrap(mul(z_pow_2_adj, _LOG_2), mul(num_scaled, recip_denom))
    return gm.rescale_by(total, accum_bits - output_integer_bits)


def log_softmax_int8(x, params: LogSoftmaxParams) -> np.ndarray:
    """reference_ops::LogSoftmaxQuantized over the last axis of int8 `x`."""
    x = np.asarray(x, np.int64)
    diff = x - np.maximum(x.max(axis=-1, keepdims=True), -128)
    q5 = multiply_by_quantized_multiplier(diff, params.input_multiplier, params.input_left_shift)
    terms = rounding_divide_by_pot(gm.exp_on_negative_values(q5, SCALED_DIFF_INTEGER_BITS),
                                   ACCUMULATION_INTEGER_BITS).astype(np.int64)
    total = np.where(diff >= params.diff_min, terms, 0).sum(axis=-1, keepdims=True)
    total = ((total + (1 << 31)) % (1 << 32)) - (1 << 31)  # the int32 accumulator wraps
    log_sum = log_x_ge_1(total).astype(np.int64)
    reverse = multiply_by_quantized_multiplier(log_sum + INT32_MIN, params.reverse_scaling_divisor,
                                               -params.reverse_scaling_right_shift)
    adjusted_diff_min = np.maximum(params.diff_min - 1, reverse.astype(np.int64))
    out = rounding_divide_by_pot(sub_wrap(q5, log_sum), 31 - SCALED_DIFF_INTEGER_BITS - _OUTPUT_INTEGER_BITS)
    out = clamp(out.astype(np.int64) + 127, -128, 127)
    return np.where(diff > adjusted_diff_min, out, -128).astype(np.int8)
