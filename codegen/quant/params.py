"""Compile-time quantization constants, computed exactly as TFLM's Prepare functions do.

Each function takes the float scales / zero points read from the model and returns the
integers (multipliers, shifts, offsets, clamp bounds) that TFLM would compute at Prepare
time, including its float-vs-double quirks (Sub works in float32, Add in double), so the
generated kernels agree with TFLM bit for bit. Scales are treated as the float32 values
stored in the flatbuffer. Invalid combinations that TFLM rejects raise `KilnError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import KilnError

_ACTIVATIONS = ("none", "relu", "relu6", "relu_n1_to_1")
_DTYPE_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


def round_half_away(x: float) -> float:
    """C `std::round` (TfLiteRound) on a double: halves go away from zero. Exact."""
    r = math.floor(abs(x))
    if abs(x) - r >= 0.5:
        r += 1
    return float(math.copysign(r, x))


def _f32(x) -> np.float32:
    return np.float32(x)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLM QuantizeMultiplier: real ~= multiplier * 2**(shift - 31), multiplier in
    [2**30, 2**31) (or 0). A mantissa that rounds up to 2**31 is halved; shifts below -31
    flush to (0, 0)."""
    real = float(real)
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = int(round_half_away(q * (1 << 31)))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > 31:  # a rescale by more than 2**31: no int32 fixed-point kernel can apply it
        raise KilnError(f"rescale factor {real!r} is beyond int32 fixed point (shift {shift})")
    return q_fixed, shift


def quantize_multiplier_array(reals) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel `quantize_multiplier` (TFLM QuantizeMultiplierArray): int32 arrays."""
    pairs = [quantize_multiplier(float(r)) for r in np.asarray(reals, dtype=np.float64).ravel()]
    mult = np.array([m for m, _ in pairs], dtype=np.int32).reshape(np.shape(reals))
    shift = np.array([s for _, s in pairs], dtype=np.int32).reshape(np.shape(reals))
    return mult, shift


def _smaller_than_one(real: float, what: str) -> tuple[int, int]:
    """TFLM QuantizeMultiplierSmallerThanOneExp, which requires 0 < real < 1."""
    if not 0.0 < real < 1.0:
        raise KilnError(f"{what}: rescale factor {real!r} is outside (0, 1), which TFLM rejects")
    return quantize_multiplier(real)


def conv_output_multipliers(input_scale: float, filter_scales, output_scale: float):
    """Per-output-channel (multiplier, shift) of Conv2D / DepthwiseConv2D (TFLM
    PopulateConvolutionQuantizationParams) and per-channel FullyConnected:
    double(input_scale) * double(filter_scale) / double(output_scale)."""
    fs = np.asarray(filter_scales, dtype=np.float32).astype(np.float64)
    reals = float(_f32(input_scale)) * fs / float(_f32(output_scale))
    return quantize_multiplier_array(reals)


def fully_connected_output_multiplier(input_scale, filter_scale, output_scale) -> tuple[int, int]:
    """Per-tensor FullyConnected (TFLM GetQuantizedConvolutionMultipler): the input*filter
    scale product is taken in float32 before widening, unlike the per-channel path."""
    product = float(_f32(input_scale) * _f32(filter_scale))
    return quantize_multiplier(product / float(_f32(output_scale)))


def quantized_activation_range(activation: str, scale: float, zero_point: int,
                               dtype: str = "int8") -> tuple[int, int]:
    """TFLM CalculateActivationRangeQuantized: the fused activation as int clamp bounds.
    Bounds are quantized as zero_point + roundf(f / scale) in float32."""
    if activation not in _ACTIVATIONS:
        raise KilnError(f"unknown fused activation {activation!r}; expected one of {_ACTIVATIONS}")
    qmin, qmax = _DTYPE_RANGE[dtype]

    def q(f: float) -> int:
        return int(zero_point) + int(round_half_away(float(_f32(f) / _f32(scale))))

    if activation == "relu":
        return max(qmin, q(0.0)), qmax
    if activation == "relu6":
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if activation == "relu_n1_to_1":
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    return qmin, qmax


@dataclass(frozen=True)
class AddSubParams:
    """Constants of the int8 Add/Sub kernels (TFLM OpDataAdd / OpDataSub, ArithmeticParams)."""

    left_shift: int
    input1_offset: int
    input1_multiplier: int
    input1_shift: int
    input2_offset: int
    input2_multiplier: int
    input2_shift: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    activation_min: int
    activation_max: int


def add_sub_params(op: str, input1_scale: float, input1_zero_point: int, input2_scale: float,
                   input2_zero_point: int, output_scale: float, output_zero_point: int,
                   activation: str = "none", dtype: str = "int8") -> AddSubParams:
    """TFLM CalculateOpDataAdd / CalculateOpDataSub for int8: both inputs are brought to a
    common scale with 20 bits of headroom (15 for int16), summed, then rescaled to the output.

    The rescale factors are computed in double for both ops. TFLM's sub_common.cc reads as
    if Sub divided in float32, but the `tflite-micro` reference build gives the double
    result: with float32 factors 49 of 399 random decimal-scale SUB models differ by 1 LSB,
    with double none (tests/frontends/test_tflite_ops.py keeps one such case).
    """
    if op not in ("add", "sub"):
        raise KilnError(f"add_sub_params: op must be 'add' or 'sub', not {op!r}")
    left_shift = 15 if dtype == "int16" else 20
    s1, s2, so = _f32(input1_scale), _f32(input2_scale), _f32(output_scale)
    twice_max = 2 * float(max(s1, s2))
    real1 = float(s1) / twice_max
    real2 = float(s2) / twice_max
    real_out = twice_max / ((1 << left_shift) * float(so))
    m1, sh1 = _smaller_than_one(real1, f"{op} input1")
    m2, sh2 = _smaller_than_one(real2, f"{op} input2")
    mo, sho = _smaller_than_one(real_out, f"{op} output")
    act_min, act_max = quantized_activation_range(activation, output_scale, output_zero_point, dtype)
    return AddSubParams(left_shift, -int(input1_zero_point), m1, sh1, -int(input2_zero_point),
                        m2, sh2, int(output_zero_point), mo, sho, act_min, act_max)


def squared_difference_params(input1_scale: float, input1_zero_point: int, input2_scale: float,
                              input2_zero_point: int, output_scale: float, output_zero_point: int,
                              dtype: str = "int8") -> AddSubParams:
    """TFLM SquaredDifferencePrepare (PrepareQuantized): Add's common input scale, then (twice
    the larger scale)**2 / (2**(2 * left shift) * output scale) for the squared difference;
    that product of a power of two and the output scale is float32 in TFLM. The left shift is
    7 for int8, 0 for int16 (whose zero points TFLM requires to be 0)."""
    left_shift = 0 if dtype == "int16" else 7
    s1, s2 = _f32(input1_scale), _f32(input2_scale)
    twice_max = 2 * float(max(s1, s2))
    m1, sh1 = _smaller_than_one(float(s1) / twice_max, "squared difference input1")
    m2, sh2 = _smaller_than_one(float(s2) / twice_max, "squared difference input2")
    mo, sho = quantize_multiplier(twice_max * twice_max / float(_f32(_f32(1 << 2 * left_shift) * _f32(output_scale))))
    lo, hi = _DTYPE_RANGE[dtype]
    return AddSubParams(left_shift, -int(input1_zero_point), m1, sh1, -int(input2_zero_point),
                        m2, sh2, int(output_zero_point), mo, sho, lo, hi)


@dataclass(frozen=True)
class MulParams:
    """Constants of the int8 Mul kernel (TFLM OpDataMul)."""

    input1_offset: int
    input2_offset: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    activation_min: int
    activation_max: int


def mul_params(input1_scale: float, input1_zero_point: int, input2_scale: float,
               input2_zero_point: int, output_scale: float, output_zero_point: int,
               activation: str = "none", dtype: str = "int8") -> MulParams:
    """TFLM CalculateOpDataMul for int8 and int16: one multiplier for s1 * s2 / s_out (in double)."""
    real = float(_f32(input1_scale)) * float(_f32(input2_scale)) / float(_f32(output_scale))
    m, s = quantize_multiplier(real)
    act_min, act_max = quantized_activation_range(activation, output_scale, output_zero_point, dtype)
    return MulParams(-int(input1_zero_point), -int(input2_zero_point), int(output_zero_point),
                     m, s, act_min, act_max)


# DIV's rescale factor must leave TFLM's final shift a right shift: the quotient's headroom is
# at least 23 bits (|dividend| <= 255), so factors up to 2**22 keep it so.
MAX_DIV_SHIFT = 22


def div_params(input1_scale: float, input1_zero_point: int, input2_scale: float, input2_zero_point: int,
               output_scale: float, output_zero_point: int, activation: str = "none") -> MulParams:
    """TFLM CalculateOpDataDiv for int8: one multiplier for s1 / (s2 * s_out). The source
    reads as float32 arithmetic, but the `tflite-micro` reference build gives the double
    result (measured: with float32 factors, exact ties such as 0.05 / (0.02 * 0.1) = 25 round
    the other way on hundreds of the 65536 operand pairs; with double none)."""
    real = float(_f32(input1_scale)) / (float(_f32(input2_scale)) * float(_f32(output_scale)))
    m, s = quantize_multiplier(real)
    if s > MAX_DIV_SHIFT:
        raise KilnError(f"DIV: int8 rescale factor {real!r} (input1 scale / (input2 scale * output scale)) is "
                        f"2**{MAX_DIV_SHIFT} or more, where TFLM's final shift turns left (not supported)")
    act_min, act_max = quantized_activation_range(activation, output_scale, output_zero_point)
    return MulParams(-int(input1_zero_point), -int(input2_zero_point), int(output_zero_point), m, s, act_min, act_max)


def requantize_params(input_scale: float, output_scale: float) -> tuple[int, int]:
    """TFLM Quantize (int8 -> int8 requantize) Prepare: double(s_in) / double(s_out)."""
    return quantize_multiplier(float(_f32(input_scale)) / float(_f32(output_scale)))


def calculate_input_radius(input_integer_bits: int, input_left_shift: int,
                           total_signed_bits: int = 31) -> int:
    """TFLM CalculateInputRadius: the largest |input| whose rescaled value still fits in
    Q`input_integer_bits` (floor of (2**ib - 1) * 2**(tsb - ib) / 2**left_shift)."""
    value = (1.0 * ((1 << input_integer_bits) - 1) * (1 << (total_signed_bits - input_integer_bits))
             / (1 << input_left_shift))
    return int(math.floor(value))
