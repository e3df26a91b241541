"""codegen.quant.fixedpoint and gemmlowp_math: hand-worked values, edges, exact-arithmetic
properties (Hypothesis, against Python big integers) and accuracy of the fixed-point
transcendental functions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.quant import fixedpoint as fp
from codegen.quant import gemmlowp_math as gm

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
i32 = st.integers(I32_MIN, I32_MAX)


@pytest.mark.parametrize("a,b,want", [
    (I32_MIN, I32_MIN, I32_MAX),            # the one saturating product
    (I32_MIN, I32_MAX, -I32_MAX),           # exact: -2**31 * (2**31-1) / 2**31
    (I32_MAX, I32_MAX, I32_MAX - 1),        # (2**31-1)**2 / 2**31 = 2**31 - 2 + tiny
    (1 << 30, 1 << 30, 1 << 29),            # 0.5 * 0.5 = 0.25 in Q0.31
    (1 << 15, 1 << 15, 1),                  # +0.5 rounds up
    (1 << 15, -(1 << 15), 0),               # -0.5 rounds up too (toward +inf)
    (3 << 15, -(1 << 15), -1),              # -1.5 -> -1
    (0, I32_MIN, 0),
])
def test_srdhm_hand_values(a, b, want):
    assert int(fp.saturating_rounding_doubling_high_mul(a, b)) == want


@pytest.mark.parametrize("x,e,want", [
    (5, 1, 3), (-5, 1, -3),                 # ties away from zero
    (-4, 1, -2), (6, 2, 2), (-6, 2, -2), (-7, 2, -2), (-5, 2, -1),
    (123, 0, 123), (-123, 0, -123),
    (I32_MIN, 31, -1), (I32_MAX, 31, 1), (-(1 << 30), 31, -1), ((1 << 30) - 1, 31, 0),
])
def test_rounding_divide_by_pot_hand_values(x, e, want):
    assert int(fp.rounding_divide_by_pot(x, e)) == want


def test_rounding_divide_by_pot_rejects_bad_exponent():
    with pytest.raises(ValueError):
        fp.rounding_divide_by_pot(1, 32)


@pytest.mark.parametrize("x,m,s,want", [
    (12345, 1 << 30, 1, 12345),             # multiplier 0.5 * 2**1 = identity
    (100, 1 << 30, 0, 50),
    (5, 1 << 30, -1, 2),                    # 1.25: double rounding gives 2 (single: 1)
    (-5, 1 << 30, -1, -1),                  # -1.25: srdhm -> -2 (tie up), rdbpot -> -1
    (1 << 30, 1 << 30, 2, 0),               # x << 2 wraps to 0, as TFLM's int32 multiply
    (1000, 1518500250, -3, 88),             # 1000 * 0.7071 / 8 = 88.4
])
def test_mbqm_hand_values(x, m, s, want):
    assert int(fp.multiply_by_quantized_multiplier(x, m, s)) == want


def test_mbqm_broadcasts_per_channel():
    acc = np.arange(-6, 6).reshape(3, 4) * 1000
    mult = np.array([1 << 30, 1 << 30, 1518500250, 2 ** 31 - 1])
    shift = np.array([0, -2, 1, -31])
    got = fp.multiply_by_quantized_multiplier(acc, mult, shift)
    assert got.dtype == np.int32 and got.shape == (3, 4)
    for idx, x in np.ndenumerate(acc):
        c = idx[1]
        assert got[idx] == fp.multiply_by_quantized_multiplier(int(x), mult[c], shift[c])


def exact_round(num: int, den_bits: int, half_up: bool) -> int:
    """num / 2**den_bits rounded to nearest, ties up or away from zero, in big integers."""
    if half_up:
        return (num + (1 << (den_bits - 1))) >> den_bits
    mag = (abs(num) + (1 << (den_bits - 1))) >> den_bits if den_bits else abs(num)
    return mag if num >= 0 else -mag


@settings(max_examples=300, deadline=None)
@given(i32, i32)
def test_srdhm_is_round_half_up_of_exact_product(a, b):
    want = I32_MAX if a == b == I32_MIN else exact_round(a * b, 31, half_up=True)
    assert int(fp.saturating_rounding_doubling_high_mul(a, b)) == want


@settings(max_examples=300, deadline=None)
@given(i32, st.integers(0, 31))
def test_rdbpot_is_round_half_away_of_exact_quotient(x, e):
    assert int(fp.rounding_divide_by_pot(x, e)) == exact_round(x, e, half_up=False)


@settings(max_examples=300, deadline=None)
@given(st.integers(-(1 << 24), 1 << 24), st.integers(1 << 30, I32_MAX), st.integers(-20, 6))
def test_mbqm_within_one_of_exact(x, m, s):
    exact = x * m * 2.0 ** (s - 31)
    if abs(exact) < 2 ** 30 and abs(x) * 2 ** max(s, 0) < 2 ** 31:
        assert abs(int(fp.multiply_by_quantized_multiplier(x, m, s)) - exact) <= 1.0


def test_saturating_left_shift_edges():
    assert int(fp.saturating_left_shift(1 << 28, 2)) == 1 << 30
    assert int(fp.saturating_left_shift(1 << 29, 2)) == I32_MAX
    assert int(fp.saturating_left_shift(-(1 << 29), 2)) == I32_MIN
    assert int(fp.saturating_left_shift((1 << 29) - 1, 2)) == (1 << 31) - 4
    assert int(fp.saturating_left_shift(-7, 0)) == -7
    assert int(fp.saturating_rounding_multiply_by_pot(-7, -1)) == -4


def test_misc_helpers():
    assert list(fp.count_leading_zeros_u32([0, 1, -1, I32_MIN, 1 << 19])) == [32, 31, 0, 0, 12]
    assert list(fp.rounding_half_sum([1, -1, 3, I32_MAX], [0, 0, 4, I32_MAX])) == [1, -1, 4, I32_MAX]
    assert list(fp.rounding_average([5, -5, 7, -6, 0, 10], [2, 2, 4, 4, 3, 1])) == [3, -3, 2, -2, 0, 10]
    assert int(fp.add_wrap(I32_MAX, 1)) == I32_MIN
    assert list(fp.clamp([-300, 5, 300], -128, 127)) == [-128, 5, 127]


def test_exp_on_negative_values_accuracy():
    for bits in (0, 4, 5, 8):
        xs = np.linspace(-min(2 ** bits, 16), 0, 1001)[:-1] if bits else np.linspace(-1, 0, 1001)[:-1]
        raw = np.round(xs * 2.0 ** (31 - bits)).astype(np.int64)
        got = gm.exp_on_negative_values(raw, bits) / 2.0 ** 31
        assert np.max(np.abs(got - np.exp(raw / 2.0 ** (31 - bits)))) < 5e-7
    assert int(gm.exp_on_negative_values(0, 5)) == I32_MAX
    assert int(gm.exp_on_negative_values(-(1 << 26), 5)) == pytest.approx(math.exp(-1) * 2 ** 31, rel=1e-6)
    assert int(gm.exp_on_negative_values(-(33 << 24), 7)) == 0  # below -32 with 7 integer bits


def test_reciprocal_and_sigmoids_accuracy():
    a = np.linspace(0, 1, 1000, endpoint=False)
    got = gm.one_over_one_plus_x_for_x_in_0_1(np.round(a * 2 ** 31).astype(np.int64)) / 2 ** 31
    assert np.max(np.abs(got - 1 / (1 + a))) < 1e-8
    got = gm.one_minus_x_over_one_plus_x_for_x_in_0_1(np.round(a * 2 ** 31).astype(np.int64)) / 2 ** 31
    assert np.max(np.abs(got - (1 - a) / (1 + a))) < 1e-8
    x = np.linspace(-15.9, 15.9, 2001)
    raw = np.round(x * 2 ** 27).astype(np.int64)
    assert np.max(np.abs(gm.logistic(raw, 4) / 2 ** 31 - 1 / (1 + np.exp(-raw / 2 ** 27)))) < 1e-6
    assert np.max(np.abs(gm.tanh(raw, 4) / 2 ** 31 - np.tanh(raw / 2 ** 27))) < 1e-6
    assert int(gm.logistic(0, 4)) == 1 << 30 and int(gm.tanh(0, 4)) == 0


@pytest.mark.parametrize("x,digits", [(1 << 19, 12), (3 << 19, 12), (1 << 30, 12), (12345, 12)])
def test_get_reciprocal(x, digits):
    scale, nbou = gm.get_reciprocal(x, digits)
    value = x / 2.0 ** (31 - digits)
    assert scale / 2 ** 31 * 2.0 ** -int(nbou) == pytest.approx(1 / value, rel=1e-8)
