"""TFLite Micro's int16 Softmax (reference_ops::SoftmaxInt16), bit-exact: the row maximum
subtracted, the difference rescaled to [-65535, 0] over 10 units, exp(x) and 1 / (1 + x) read
from two 513-entry int16 tables with 7-bit linear interpolation, the sum's reciprocal applied
with a rounding shift.

The tables are TFLM's LUTPopulate<int16_t>, evaluated here in float32 step by step as its
float instantiation does (512 samples, each biased by half the interpolation error at its
midpoint, saturated to int16).
"""

from __future__ import annotations

import numpy as np

from .fixedpoint import count_leading_zeros_u32, multiply_by_quantized_multiplier
from .params import quantize_multiplier

F = np.float32
LUT_SIZE = 513
_RANGE = 65535  # int16 max - min


def _round(v) -> np.float32:
    """C roundf: halves away from zero."""
    return F(np.sign(v) * np.floor(np.abs(v) + F(0.5)))


def lut_populate_int16(input_scale: float, input_zp: int, output_scale: float, output_zp: int, fn) -> np.ndarray:
    """TFLM LUTPopulateInt16<float>: `fn` (float32 -> float32) over the int16 input range."""
    input_min = F(input_scale) * F(-32768 - input_zp)
    input_max = F(input_scale) * F(32767 - input_zp)
    output_min = F(output_scale) * F(-32768 - output_zp)
    output_max = F(output_scale) * F(32767 - output_zp)
    step = F((input_max - input_min) / F(512))
    half_step = F(step / F(2))
    inv = F(F(65536) / F(output_max - output_min))
    lut = np.zeros(LUT_SIZE, np.int16)
    for i in range(512):
        x = F(input_min + F(F(i) * step))
        val = fn(x)
        val_mid = fn(F(x + half_step))
        val_next = fn(F(input_min + F(F(i + 1) * step)))
        sample = _round(F(val * inv))
        interp = _round(F(F(F(val_next * inv) + _round(F(val * inv))) / F(2)))
        mid = _round(F(val_mid * inv))
        bias = _round(F(F(interp - mid) / F(2)))
        lut[i] = int(np.clip(F(sample - bias), -32768, 32767))
    lut[512] = int(np.clip(_round(F(fn(input_max) * inv)), -32768, 32767))
    return lut


def exp_lut() -> np.ndarray:
    """SoftmaxPrepare's exp table: inputs [-10, 0], outputs [-1, 1]."""
    return lut_populate_int16(F(10.0) / F(_RANGE), 32767, F(2.0) / F(_RANGE), 0, lambda v: F(np.exp(F(v))))


def one_over_one_plus_x_lut() -> np.ndarray:
    """SoftmaxPrepare's reciprocal table: 1 / (1 + x) for inputs [0, 1], outputs [-1, 1]."""
    return lut_populate_int16(F(1.0) / F(_RANGE), -32768, F(2.0) / F(_RANGE), 0,
                              lambda v: F(F(1.0) / F(F(1.0) + F(v))))


def softmax16_multiplier(input_scale: float, beta: float) -> tuple[int, int]:
    """SoftmaxPrepare for int16: QuantizeMultiplier(s_in * beta / (10 / 65535)) in double."""
    return quantize_multiplier(float(F(input_scale)) * float(F(beta)) / (10.0 / 65535.0))


def lut_lookup_int16(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """TFLM LUTLookup(int16): entry 256 + (value >> 7), interpolated by the low 7 bits."""
    v = np.asarray(value, np.int64)
    index = 256 + (v >> 7)
    base = lut.astype(np.int64)[index]
    slope = lut.astype(np.int64)[index + 1] - base
    out = base + ((slope * (v & 0x7F) + 64) >> 7)
    return ((out + 32768) % 65536 - 32768).astype(np.int16)


def softmax_int16(rows: np.ndarray, multiplier: int, shift: int, exp_table: np.ndarray,
                  recip_table: np.ndarray) -> np.ndarray:
    """SoftmaxInt16 over the last axis of int16 `rows`."""
    x = np.asarray(rows, np.int64)
    diff = x - x.max(axis=-1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, multiplier, shift).astype(np.int64)
    e = lut_lookup_int16(np.clip(scaled + 32767, -32768, 32767), exp_table).astype(np.int64)
    total = e.sum(axis=-1, keepdims=True)
    headroom = count_leading_zeros_u32(total).astype(np.int64)
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    recip = lut_lookup_int16(np.clip(shifted - ((1 << 15) + (1 << 16)), -32768, 32767), recip_table).astype(np.int64)
    right = 31 - headroom
    out = (e * recip + (np.int64(1) << (right - 1))) >> right
    return np.clip(out, 0, 32767).astype(np.int16)
