"""Integer primitives of TFLite Micro's fixed-point arithmetic, vectorised over numpy arrays.

These are the building blocks every int8 kernel of TFLM is made of (gemmlowp's
`fixedpoint.h` and TFLM's `kernels/internal/common.{h,cc}`), reproduced bit for bit so that
the compiler can precompute tables and check generated C against them. `runtime_c/kiln_quant.h`
mirrors each function in C; the tests hold the two together.

Conventions:
- Inputs are anything `np.asarray` accepts; scalars and arrays broadcast against each other
  (a per-channel multiplier/shift array broadcasts against the accumulator array).
- Work is done in int64 and results are returned as int32 arrays (0-d for scalar inputs).
- Where the C++ source computes in plain `int32_t` and may wrap (e.g. `x * (1 << shift)`,
  gemmlowp's raw `a + b`), we wrap to 32 bits too: that is what the compiled TFLM does on
  every target we care about, and the C mirror does it without undefined behaviour.
- TFLM is built *without* `TFLITE_SINGLE_ROUNDING` (the `tflite-micro` pip package too; see
  tests/quant/test_quant_vs_tflm.py), so `multiply_by_quantized_multiplier` is the double-rounding
  variant: a rounding doubling high multiply, then a rounding right shift.
"""

from __future__ import annotations

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def _i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def wrap_int32(x) -> np.ndarray:
    """Reduce int64 values modulo 2**32 into the int32 range (two's-complement wrap)."""
    return _i64(x).astype(np.int32)


def clamp(x, lo, hi) -> np.ndarray:
    """`min(max(x, lo), hi)` as TFLM writes it, returned as int32."""
    return np.minimum(np.maximum(_i64(x), lo), hi).astype(np.int32)


def _trunc_div_pow2(x: np.ndarray, bits: int) -> np.ndarray:
    """C's `x / (1 << bits)` for int64 x: division rounding toward zero."""
    q = np.abs(x) >> bits
    return np.where(x < 0, -q, q)


def saturating_rounding_doubling_high_mul(a, b) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul (ARM VQRDMULH): a*b / 2**31 rounded to
    nearest with ties toward +infinity (0.5 -> 1, -0.5 -> 0).

    INT32_MIN * INT32_MIN, the one product whose result does not fit, saturates to INT32_MAX.
    """
    a, b = np.broadcast_arrays(_i64(a), _i64(b))
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    high = _trunc_div_pow2(ab + nudge, 31)
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    return np.where(overflow, INT32_MAX, high).astype(np.int32)


def rounding_divide_by_pot(x, exponent) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: arithmetic right shift by `exponent` (0..31),
    rounding to nearest with ties away from zero."""
    x, e = np.broadcast_arrays(_i64(x), _i64(exponent))
    if np.any((e < 0) | (e > 31)):
        raise ValueError("rounding_divide_by_pot: exponent must be in [0, 31]")
    mask = (np.int64(1) << e) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return ((x >> e) + (remainder > threshold)).astype(np.int32)


def rounding_divide_by_pot_wide(x, exponent) -> np.ndarray:
    """RoundingDivideByPOT for exponents that may exceed 31, as TFLM's int8 DIV reaches them
    (tiny quotients). Above 31 gemmlowp's code is undefined in C++; what the `tflite-micro`
    reference build computes there (measured on every int8 operand pair) is the x86-64
    reading: the mask `(1ll << e) - 1` truncated to int32 is -1 and the shift count is taken
    modulo 32, giving (x >> (e % 32)) + (x >= 0)."""
    x, e = np.broadcast_arrays(_i64(x), _i64(exponent))
    small = np.minimum(e, 31)
    wide = (x >> (e & 31)) + (x >= 0)
    return np.where(e > 31, wide, rounding_divide_by_pot(x, small)).astype(np.int32)


def saturating_left_shift(x, exponent: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingMultiplyByPOT for a positive exponent: x * 2**exponent,
    saturated to the int32 range (exactly as gemmlowp's threshold test does it)."""
    x = _i64(x)
    if exponent == 0:
        return x.astype(np.int32)
    threshold = (1 << (31 - exponent)) - 1
    out = np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))
    return out.astype(np.int32)


def saturating_rounding_multiply_by_pot(x, exponent: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingMultiplyByPOT<exponent>: saturating left shift for a
    positive exponent, rounding right shift for a negative one. gemmlowp's `Rescale`."""
    if exponent >= 0:
        return saturating_left_shift(x, exponent)
    return rounding_divide_by_pot(x, -exponent)


def multiply_by_quantized_multiplier(x, multiplier, shift) -> np.ndarray:
    """TFLM MultiplyByQuantizedMultiplier(int32 x, int32 multiplier, int shift), default
    (double-rounding) build: x * multiplier * 2**(shift - 31), rounded twice.

    A positive shift is applied first as a wrapping left shift of x, a negative one last as a
    rounding right shift. This is also MultiplyByQuantizedMultiplierSmallerThanOneExp and
    ...GreaterThanOne, which are the two halves of the same computation.
    """
    x, m, s = np.broadcast_arrays(_i64(x), _i64(multiplier), _i64(shift))
    left = np.maximum(s, 0)
    right = np.maximum(-s, 0)
    shifted = wrap_int32(x << left)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, m), right)


def multiply_by_quantized_multiplier_s64(x, multiplier, shift) -> np.ndarray:
    """TFLM MultiplyByQuantizedMultiplier(int64 x, int32 multiplier, int shift), the int16
    (16x8) kernels' output stage: the multiplier rounded to its top 15 bits (saturating at
    0x7FFF), one product, one rounding shift by 15 - shift. Both TFLM builds compute it
    alike. The result is cast to int32 as TFLM's static_cast does (wrapping)."""
    x, m, s = np.broadcast_arrays(_i64(x), _i64(multiplier), _i64(shift))
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - s
    return wrap_int32((x * reduced + (np.int64(1) << (total - 1))) >> total)


def rounding_half_sum(a, b) -> np.ndarray:
    """gemmlowp RoundingHalfSum for int32: (a + b) / 2 rounded half away from zero."""
    s = _i64(a) + _i64(b)
    sign = np.where(s >= 0, 1, -1)
    return _trunc_div_pow2(s + sign, 1).astype(np.int32)


def add_wrap(a, b) -> np.ndarray:
    """Raw int32 `a + b` as gemmlowp's FixedPoint operator+ computes it (wrapping)."""
    return wrap_int32(_i64(a) + _i64(b))


def sub_wrap(a, b) -> np.ndarray:
    """Raw int32 `a - b` as gemmlowp's FixedPoint operator- computes it (wrapping)."""
    return wrap_int32(_i64(a) - _i64(b))


def count_leading_zeros_u32(x) -> np.ndarray:
    """Leading zero bits of x reinterpreted as uint32 (32 for zero), as TFLM CountLeadingZeros."""
    u = _i64(x) & 0xFFFFFFFF
    n = np.zeros(u.shape, dtype=np.int64)
    for bits in (16, 8, 4, 2, 1):
        small = u < (np.int64(1) << (32 - bits))
        n = np.where(small, n + bits, n)
        u = np.where(small, u << bits, u)
    return np.where(_i64(x) & 0xFFFFFFFF == 0, 32, n).astype(np.int32)


def count_leading_sign_bits(x) -> np.ndarray:
    """TFLM CountLeadingSignBits for int32: the redundant sign bits (31 for 0 and -1)."""
    x = _i64(x)
    return (count_leading_zeros_u32(np.where(x >= 0, x, ~x)).astype(np.int64) - 1).astype(np.int32)


def rounding_average(acc, count) -> np.ndarray:
    """TFLM int8 AveragePool's division of a window sum by its element count: round half
    away from zero, then C truncating division (`(acc ± count/2) / count`)."""
    acc, count = np.broadcast_arrays(_i64(acc), _i64(count))
    half = count // 2
    num = np.where(acc > 0, acc + half, acc - half)
    q = np.abs(num) // count
    return np.where(num < 0, -q, q).astype(np.int32)
