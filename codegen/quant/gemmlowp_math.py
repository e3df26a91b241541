"""gemmlowp's fixed-point transcendental functions, as TFLM's int8 Softmax/Logistic/Tanh use them.

A gemmlowp `FixedPoint<int32_t, k>` is a raw int32 holding value * 2**(31 - k) ("Qk.(31-k)").
Here every value is its raw int32 and the integer bits k are an explicit argument; fixed-point
multiplication is `saturating_rounding_doubling_high_mul` (integer bits add up), `Rescale`
is `saturating_rounding_multiply_by_pot`, `+`/`-` wrap. The polynomial and Newton-Raphson
steps follow gemmlowp's evaluation order exactly, since each step rounds.
"""

from __future__ import annotations

import numpy as np

from .fixedpoint import (
    INT32_MAX,
    add_wrap,
    count_leading_zeros_u32,
    rounding_divide_by_pot,
    rounding_half_sum,
    saturating_rounding_doubling_high_mul as mul,
    saturating_rounding_multiply_by_pot as rescale_by,
    sub_wrap,
)

#: Q0.31 constants of gemmlowp's exp: exp(-1/8) and 1/3.
_EXP_MINUS_ONE_EIGHTH = 1895147668
_ONE_THIRD = 715827883
#: exp(-2**e) in Q0.31 for the barrel shifter over the integer part of the input.
_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))
#: Newton-Raphson start constants in Q2.29: 48/17 and -32/17.
_48_OVER_17 = 1515870810
_NEG_32_OVER_17 = -1010580540
_ONE_Q2 = 1 << 29


def exp_on_interval_between_negative_one_quarter_and_0_excl(a) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), a and result in Q0.31: Taylor series around -1/8."""
    x = add_wrap(a, 1 << 28)
    x2 = mul(x, x)
    x3 = mul(x2, x)
    x4 = mul(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(add_wrap(mul(add_wrap(x4_over_4, x3), _ONE_THIRD), x2), 1)
    return add_wrap(_EXP_MINUS_ONE_EIGHTH, mul(_EXP_MINUS_ONE_EIGHTH, add_wrap(x, poly)))


def exp_on_negative_values(a, integer_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 given in Q`integer_bits`, result in Q0.31 (exp(0) = INT32_MAX)."""
    a = np.asarray(a, dtype=np.int64)
    frac_bits = 31 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    a_mod_quarter_minus_one_quarter = sub_wrap(a & (one_quarter - 1), one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale_by(a_mod_quarter_minus_one_quarter, integer_bits))
    remainder = sub_wrap(a_mod_quarter_minus_one_quarter, a).astype(np.int64)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac_bits + exponent)
            result = np.where(remainder & bit, mul(result, multiplier), result)
    if integer_bits > 5:
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, INT32_MAX, result).astype(np.int32)


def _newton_reciprocal_q2(half_denominator) -> np.ndarray:
    """Three Newton-Raphson steps towards 1 / half_denominator, result in Q2.29."""
    x = add_wrap(_48_OVER_17, mul(half_denominator, _NEG_32_OVER_17))
    for _ in range(3):
        one_minus_half_denominator_times_x = sub_wrap(_ONE_Q2, mul(half_denominator, x))
        x = add_wrap(x, rescale_by(mul(x, one_minus_half_denominator_times_x), 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """1 / (1 + a) for a in [0, 1), a and result in Q0.31."""
    x = _newton_reciprocal_q2(rounding_half_sum(a, INT32_MAX))
    return rescale_by(x, 1)  # Q2 -> (exact /2) Q1 -> Q0


def one_minus_x_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """(1 - a) / (1 + a) for a in [0, 1), a and result in Q0.31."""
    x = _newton_reciprocal_q2(rounding_half_sum(a, INT32_MAX))
    return rescale_by(sub_wrap(x, _ONE_Q2), 2)


def logistic(a, integer_bits: int) -> np.ndarray:
    """gemmlowp::logistic: 1 / (1 + exp(-a)) for a in Q`integer_bits`, result in Q0.31."""
    a = np.asarray(a, dtype=np.int64)
    positive = a > 0
    abs_a = np.where(positive, a, -a)
    if_positive = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(-abs_a, integer_bits))
    if_negative = sub_wrap(INT32_MAX, if_positive)
    out = np.where(positive, if_positive, if_negative)
    return np.where(a == 0, 1 << 30, out).astype(np.int32)


def tanh(a, integer_bits: int) -> np.ndarray:
    """gemmlowp::tanh for a in Q`integer_bits`, result in Q0.31."""
    a = np.asarray(a, dtype=np.int64)
    negative = a < 0
    n = np.where(negative, a, -a)  # -|a|
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    out = np.where(negative, -t.astype(np.int64), t)
    return np.where(a == 0, 0, out).astype(np.int32)


def get_reciprocal(x, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLM GetReciprocal: for x > 0 in Q`x_integer_digits`, returns (scale, num_bits_over_unit)
    with scale in Q0.31 such that 1/x = scale * 2**-num_bits_over_unit (scale in [0.5, 1))."""
    x = np.asarray(x, dtype=np.int64)
    headroom_plus_one = count_leading_zeros_u32(x).astype(np.int64)
    num_bits_over_unit = (x_integer_digits - headroom_plus_one).astype(np.int32)
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_sum_minus_one = sub_wrap(shifted, 1 << 31)
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


def inv_sqrt_quantized_multiplier_exp(x) -> tuple[np.ndarray, np.ndarray]:
    """TFLM GetInvSqrtQuantizedMultiplierExp(x, kReverseShift): 1/sqrt(x) for int32 x as a
    Q0.31 multiplier and a left shift (multiplier * 2**(shift - 31)). x <= 1 gives (INT32_MAX, 0),
    as TFLM treats 0 (and anything below) like 1. Normalised to [2**27, 2**29) by pairs of
    bits, then five Newton-Raphson steps in Q3.28 from 1, times sqrt(2)/2."""
    x = np.asarray(x, dtype=np.int64).copy()
    small = x <= 1
    x = np.where(small, 2, x)
    shift = np.full(x.shape, 11, np.int64)
    while np.any(big := x >= (1 << 29)):
        x = np.where(big, x // 4, x)
        shift += big
    pairs = (count_leading_zeros_u32(x).astype(np.int64) - 1) // 2 - 1
    shift -= pairs
    x = x << (2 * pairs)
    half_input = rounding_divide_by_pot(x >> 1, 1)  # Q3.28: input / 2, then halved
    root = np.full(x.shape, 1 << 28, np.int64)  # Q3.28 one
    half_three = (1 << 28) + (1 << 27)
    for _ in range(5):
        cube = rescale_by(mul(mul(root, root), root), 6)  # Q9 -> Q3
        root = rescale_by(sub_wrap(mul(half_three, root), mul(half_input, cube)), 3)  # Q6 -> Q3
    root = mul(root, 1518500250).astype(np.int64)  # * sqrt(2)/2 in Q0.31
    left = shift < 0
    root = np.where(left, (root << np.where(left, -shift, 0)) & 0xFFFFFFFF, root)
    root = np.where(root >= 1 << 31, root - (1 << 32), root)
    shift = np.where(left, 0, shift)
    return (np.where(small, INT32_MAX, root).astype(np.int32),
            np.where(small, 0, -shift).astype(np.int32))
