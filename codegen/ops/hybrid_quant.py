"""On-the-fly input quantization of TFLite's hybrid ("dynamic-range") kernels, emulated exactly.

A hybrid op (float32 activations, int8 weights) quantizes its float input to int8 at run time,
once per batch, accumulates int8 x int8 products in int32 and scales the sum back to float.
This module mirrors, bit for bit, what LiteRT's builtin kernels compute on the x86-64 host
that verifies Kiln (tflite/kernels/internal/optimized/neon_tensor_utils.cc, compiled for x86
through the NEON_2_SSE translation layer):

- symmetric (per-tensor weights): `SymmetricQuantizeFloats`, codes in [-127, 127],
  scale = range / 127 with range = max |x|, t = x * (127 / range), all in float32;
- asymmetric (per-channel weights): `AsymmetricQuantizeFloats`, codes in [-128, 127], the
  scale and the nudged zero point computed in double from the float range [min(0, min x),
  max(0, max x)], as the code does.

Rounding of t: elements in whole blocks of 8 (the vector loop) are rounded with the ARMv7
NEON idiom `trunc(t + (t < 0 ? -0.5f : 0.5f))`, whose float addition rounds; the tail
(size % 8 elements) with `std::round`, half away from zero. The two differ only for
|t| = 0.49999997 (the float just below 1/2), which the vector loop sends to +-1. ARMv8 builds
(vcvtaq) round half away everywhere; the C mirror is runtime_c/kiln_hybrid.h.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BLOCK = 8  # elements per iteration of LiteRT's vectorized quantization loop

_F32 = np.float32


@dataclass(frozen=True)
class QuantizedInput:
    """One batch quantized: int8 codes, the float32 scale and the zero point."""

    codes: np.ndarray  # int8, same shape as the batch
    scale: np.float32
    zero_point: int


def round_half_away(t: np.ndarray) -> np.ndarray:
    """std::round of float32 values, exactly (no float addition that could round)."""
    whole = np.trunc(t)
    frac = t - whole  # exact: the fractional bits of t
    return whole + (frac >= _F32(0.5)) - (frac <= _F32(-0.5))


def round_vector_idiom(t: np.ndarray) -> np.ndarray:
    """trunc(t +- 0.5f) in float32: LiteRT's RoundToNearest on pre-ARMv8 NEON / NEON_2_SSE."""
    half = np.where(t < 0, _F32(-0.5), _F32(0.5)).astype(np.float32)
    return np.trunc((t + half).astype(np.float32))


def round_like_litert(t: np.ndarray) -> np.ndarray:
    """Round a flat float32 batch as LiteRT's quantization loop does (see the module doc)."""
    t = np.asarray(t, np.float32).reshape(-1)
    split = t.size - t.size % BLOCK
    return np.concatenate([round_vector_idiom(t[:split]), round_half_away(t[split:])])


def quantize_symmetric(x: np.ndarray) -> QuantizedInput:
    """SymmetricQuantizeFloats of one batch; zero point 0."""
    flat = np.asarray(x, np.float32).reshape(-1)
    rng = _F32(np.max(np.abs(flat))) if flat.size else _F32(0)
    if rng == 0:
        return QuantizedInput(np.zeros(x.shape, np.int8), _F32(1), 0)
    scale = _F32(rng / _F32(127))
    inv = _F32(_F32(127) / rng)
    t = (flat * inv).astype(np.float32)
    q = np.clip(round_like_litert(t), -127, 127)
    return QuantizedInput(q.astype(np.int8).reshape(x.shape), scale, 0)


def asymmetric_params(lo: float, hi: float) -> tuple[np.float32, int, np.float32]:
    """(scale, zero point, 1/scale) of AsymmetricQuantizeFloats for the float32 range
    lo = min(0, min x), hi = max(0, max x), with the double arithmetic of the C++ code."""
    lo, hi = _F32(lo), _F32(hi)
    if lo == hi:
        return _F32(1), 0, _F32(1)
    scale = float(_F32(hi - lo)) / 255.0  # float subtraction, then double division
    zp_from_min = -128.0 - float(lo) / scale
    zp_from_max = 127.0 - float(hi) / scale
    err_min = 128.0 + abs(float(lo) / scale)
    err_max = 127.0 + abs(float(hi) / scale)
    zp = zp_from_min if err_min < err_max else zp_from_max
    if zp <= -128.0:
        nudged = -128
    elif zp >= 127.0:
        nudged = 127
    else:
        nudged = int(np.trunc(zp)) + (zp - np.trunc(zp) >= 0.5) - (zp - np.trunc(zp) <= -0.5)
    s32 = _F32(scale)
    return s32, int(nudged), _F32(1.0 / float(s32))


def quantize_asymmetric(x: np.ndarray) -> QuantizedInput:
    """AsymmetricQuantizeFloats of one batch: codes = clamp(zp + round(x / scale))."""
    flat = np.asarray(x, np.float32).reshape(-1)
    lo = min(_F32(0), _F32(flat.min())) if flat.size else _F32(0)
    hi = max(_F32(0), _F32(flat.max())) if flat.size else _F32(0)
    scale, zp, inv = asymmetric_params(lo, hi)
    if lo == hi:
        return QuantizedInput(np.zeros(x.shape, np.int8), scale, 0)
    t = (flat * inv).astype(np.float32)
    q = np.clip(round_like_litert(t) + zp, -128, 127)
    return QuantizedInput(q.astype(np.int8).reshape(x.shape), scale, zp)


def hybrid_scales(per_channel_scales: tuple[float, ...]) -> tuple[bool, np.ndarray]:
    """(asymmetric, weight scales as float32) of a hybrid op's int8 weights.

    LiteRT takes the per-channel (asymmetric input) path only when the weight scales are not
    all equal; otherwise it is the per-tensor (symmetric input) path with the first scale.
    """
    scales = np.asarray(per_channel_scales, np.float32).reshape(-1)
    return bool(np.any(scales != scales[0])), scales
