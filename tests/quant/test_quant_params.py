"""codegen.quant.params and the int8 kernels on hand-worked values and edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from codegen import quant as q
from codegen.errors import KilnError
from codegen.quant.params import calculate_input_radius, round_half_away


@pytest.mark.parametrize("real,want", [
    (0.0, (0, 0)),
    (0.5, (1 << 30, 0)),
    (1.0, (1 << 30, 1)),
    (0.75, (1610612736, 0)),
    (-0.5, (-(1 << 30), 0)),
    (2.0 ** -32, (1 << 30, -31)),           # shift -31 is still kept
    (2.0 ** -33, (0, 0)),                    # below that: flushed to zero
    (1 - 2.0 ** -40, (1 << 30, 1)),          # mantissa rounds to 2**31: halved, shift + 1
    (0.5 + 2.0 ** -32, ((1 << 30) + 1, 0)),  # tie 2**30 + 0.5 rounds away (not to even)
    (1234.5678, (1294538165, 11)),   # 1234.5678 * 2**20 = 1294538164.6
])
def test_quantize_multiplier(real, want):
    assert q.quantize_multiplier(real) == want


def test_quantize_multiplier_array_matches_scalar():
    reals = np.array([[0.5, 0.001], [3.0, 0.0]])
    m, s = q.quantize_multiplier_array(reals)
    assert m.dtype == np.int32 and m.shape == (2, 2)
    for idx, r in np.ndenumerate(reals):
        assert (m[idx], s[idx]) == q.quantize_multiplier(r)


def test_round_half_away():
    assert [round_half_away(v) for v in (0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994)] == \
        [1.0, 2.0, 3.0, -1.0, -3.0, 0.0]


@pytest.mark.parametrize("act,want", [
    ("none", (-128, 127)),
    ("relu", (-128, 127)),
    ("relu6", (-128, -68)),
    ("relu_n1_to_1", (-128, -118)),
])
def test_activation_range_zero_at_bottom(act, want):
    assert q.quantized_activation_range(act, 0.1, -128) == want


def test_activation_range_clamps_and_rounds():
    assert q.quantized_activation_range("relu", 0.05, 10) == (10, 127)
    assert q.quantized_activation_range("relu_n1_to_1", 0.01, 0) == (-100, 100)
    assert q.quantized_activation_range("relu6", 0.5, 3, dtype="int16") == (3, 15)
    with pytest.raises(KilnError):
        q.quantized_activation_range("gelu", 0.1, 0)


def test_conv_multipliers_per_channel():
    m, s = q.conv_output_multipliers(0.5, [0.25, 0.125, 1.0], 0.25)
    assert list(zip(m, s)) == [(1 << 30, 0), (1 << 30, -1), (1 << 30, 2)]


def test_add_params_and_compute_hand_example():
    p = q.add_sub_params("add", 0.5, 0, 0.5, 0, 0.5, 0)
    assert (p.left_shift, p.input1_multiplier, p.input1_shift) == (20, 1 << 30, 0)
    assert (p.output_multiplier, p.output_shift) == (1 << 30, -18)   # 2**-19
    assert q.add_int8(10, 20, p) == 30 and q.add_int8(100, 100, p) == 127
    assert q.sub_int8(10, 20, p) == -10 and q.sub_int8(-100, 100, p) == -128
    with pytest.raises(KilnError):
        q.add_sub_params("add", 1.0, 0, 1.0, 0, 1e-9, 0)             # output rescale >= 1


def test_sub_params_are_computed_like_add():
    # The reference build rescales Sub in double, as Add (see add_sub_params).
    add = q.add_sub_params("add", 3.0, 0, 1.0, 0, 0.7, 0)
    sub = q.add_sub_params("sub", 3.0, 0, 1.0, 0, 0.7, 0)
    assert add == sub


def test_mul_hand_example():
    p = q.mul_params(0.5, 1, 0.25, -2, 0.125, 3, "relu")
    assert (p.output_multiplier, p.output_shift) == (1 << 30, 1)    # real multiplier 1.0
    assert q.mul_int8(5, 2, p) == 4 * 4 + 3
    assert q.mul_int8(-5, 2, p) == 3                                  # relu: zero point
    assert q.mul_int8(127, 127, p) == 127


def test_softmax_params_and_fixed_rows():
    p = q.softmax_params(1.0, 0.1)
    assert p.input_left_shift >= 0 and p.diff_min < 0
    assert list(q.softmax_int8(np.zeros(4, np.int8), p)) == [-64] * 4      # 0.25 * 256 - 128
    assert list(q.softmax_int8(np.array([5], np.int8), p)) == [127]        # 1.0 saturates
    assert list(q.softmax_int8(np.zeros(4, np.int8), p, "int16")) == [-16384] * 4
    out = q.softmax_int8(np.array([[100, -100], [0, 0]], np.int8), p)
    assert out.shape == (2, 2) and list(out[0]) == [127, -128]
    with pytest.raises(KilnError):
        q.softmax_params(1.0, 1e-9)
    q.check_softmax_output("int8", 1 / 256, -128)
    with pytest.raises(KilnError):
        q.check_softmax_output("int8", 1 / 255, -128)


def test_calculate_input_radius():
    assert calculate_input_radius(4, 0) == 15 << 27
    assert calculate_input_radius(5, 26) == 31
    assert calculate_input_radius(4, 30) == 1


def test_logistic_tanh_fixed_points():
    p = q.logistic_tanh_params(0.1, 3)
    assert q.logistic_int8(3, p) == 0          # sigmoid(0) = 0.5 -> 128 - 128
    assert q.tanh_int8(3, p) == 0
    assert q.logistic_int8(127, p) == 127 and q.logistic_int8(-128, p) == -128
    assert q.tanh_int8(-128, p) == -128 and q.tanh_int8(127, p) == 127


def test_unary_lut_order():
    lut = q.unary_lut_int8(lambda x: np.clip(x.astype(np.int32) + 1, -128, 127))
    assert lut.dtype == np.int8 and lut.shape == (256,)
    assert (lut[0], lut[127], lut[128], lut[255]) == (1, 127, -127, 0)  # indexed by uint8(x)
    with pytest.raises(ValueError):
        q.unary_lut_int8(lambda x: x.astype(np.int32) * 2)


def test_quantize_rounding_and_saturation():
    x = np.array([0.25, -0.25, 1.25, -1.25, 100.0, -100.0, np.inf, np.nan], np.float32)
    assert list(q.quantize_float_to_int8(x, 0.5, 0)) == [1, -1, 3, -3, 127, -128, 127, -128]
    assert list(q.quantize_float_to_int8(np.float32([0.0, 1.0]), 0.1, -5)) == [-5, 5]


def test_requantize_and_dequantize():
    m, s = q.requantize_params(0.5, 0.5)
    assert (m, s) == (1 << 30, 1)
    assert list(q.requantize_int8(np.arange(-128, 128), m, s, 3, 3)) == list(range(-128, 128))
    m, s = q.requantize_params(0.5, 1.0)
    # multiplier 0.5 with shift 0: only the high multiply rounds, and its ties go up
    assert list(q.requantize_int8([3, -3, 5], m, s, 0, 0)) == [2, -1, 3]
    out = q.dequantize_int8(np.array([-128, 0, 127], np.int8), 0.1, 0)
    assert out.dtype == np.float32
    assert list(out) == [np.float32(0.1 * -128), 0.0, np.float32(0.1 * 127)]
