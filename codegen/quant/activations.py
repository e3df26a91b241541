"""int8 Softmax, Logistic and Tanh exactly as TFLM computes them (Prepare + reference Eval).

TFLM's int8 Softmax is the gemmlowp fixed-point path (reference_ops::Softmax: exp in Q5.26,
sum in Q12.19, reciprocal by Newton-Raphson), not a lookup table: the LUT path exists only
for int16 input. Logistic and Tanh run gemmlowp::logistic / gemmlowp::tanh on the input
rescaled to Q4.27. Since these two are unary on int8, Kiln tabulates them with
`unary_lut_int8` and the generated C does one table load per element.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import KilnError
from . import gemmlowp_math as gm
from .fixedpoint import clamp, multiply_by_quantized_multiplier, rounding_divide_by_pot
from .params import calculate_input_radius, quantize_multiplier, round_half_away

#: Integer bits of the scaled input difference fed to exp() (Q5.26), and of the sum of exps.
SCALED_DIFF_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12
#: Integer bits of the rescaled Logistic / Tanh input (Q4.27).
ACTIVATION_INPUT_INTEGER_BITS = 4


@dataclass(frozen=True)
class SoftmaxParams:
    """Constants of TFLM's int8 Softmax (SoftmaxParams after CalculateSoftmaxParams)."""

    input_multiplier: int
    input_left_shift: int
    diff_min: int


def softmax_params(beta: float, input_scale: float) -> SoftmaxParams:
    """TFLM CalculateSoftmaxParams for int8 input (PreprocessSoftmaxScaling with 5 integer
    bits; the real multiplier beta * scale * 2**26 is capped at 2**31 - 1)."""
    real = min(float(np.float32(beta)) * float(np.float32(input_scale)) * (1 << 26),
               float((1 << 31) - 1))
    if not real > 1.0:
        raise KilnError(f"softmax: beta * input_scale * 2**26 = {real!r} must exceed 1 (TFLM "
                        "QuantizeMultiplierGreaterThanOne)")
    multiplier, left_shift = quantize_multiplier(real)
    diff_min = int(-1.0 * calculate_input_radius(SCALED_DIFF_INTEGER_BITS, left_shift))
    return SoftmaxParams(multiplier, left_shift, diff_min)


def check_softmax_output(output_dtype: str, scale: float, zero_point: int) -> None:
    """TFLM's Prepare accepts int8 output only at scale 1/256, zero point -128 (exactly), and
    int16 output at scale ~1/65536, zero point -32768: the kernel's output format is fixed."""
    if output_dtype == "int8":
        ok = int(zero_point) == -128 and np.float32(scale) == np.float32(1.0 / 256)
    elif output_dtype == "int16":
        ok = int(zero_point) == -32768 and abs(float(np.float32(scale)) - 1 / 65536) <= 1e-3 / 65536
    else:
        ok = False
    if not ok:
        raise KilnError(f"softmax: {output_dtype} output with scale {scale!r}, zero point "
                        f"{zero_point} is not supported by TFLM (int8 needs 1/256, -128; "
                        "int16 needs 1/65536, -32768)")


def softmax_int8(x, params: SoftmaxParams, output_dtype: str = "int8") -> np.ndarray:
    """reference_ops::Softmax over the last axis of int8 `x`; output int8 (or int16)."""
    x = np.asarray(x, dtype=np.int64)
    out_bits, out_min = {"int8": (8, -128), "int16": (16, -32768)}[output_dtype]
    diff = x - x.max(axis=-1, keepdims=True)
    live = diff >= params.diff_min
    rescaled = multiply_by_quantized_multiplier(diff, params.input_multiplier,
                                                params.input_left_shift)
    exp_q0 = gm.exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS).astype(np.int64)
    terms = rounding_divide_by_pot(exp_q0, ACCUMULATION_INTEGER_BITS).astype(np.int64)
    sum_of_exps = np.where(live, terms, 0).sum(axis=-1, keepdims=True)
    sum_of_exps = ((sum_of_exps + (1 << 31)) % (1 << 32)) - (1 << 31)  # int32 accumulator
    scale, num_bits_over_unit = gm.get_reciprocal(sum_of_exps, ACCUMULATION_INTEGER_BITS)
    exponent = num_bits_over_unit.astype(np.int64) + 31 - out_bits
    if np.any((exponent < 0) | (exponent > 31)):
        raise KilnError("softmax: output exponent out of [0, 31] (TFLM TFLITE_CHECK fails)")
    unsat = rounding_divide_by_pot(gm.mul(scale, exp_q0), exponent).astype(np.int64)
    out = np.where(live, clamp(unsat + out_min, out_min, -out_min - 1), out_min)
    return out.astype(np.int8 if out_bits == 8 else np.int16)


@dataclass(frozen=True)
class UnaryActivationParams:
    """Constants of TFLM's int8 Logistic / Tanh (OpDataLogistic, tanh's OpData)."""

    input_zero_point: int
    input_range_radius: int
    input_multiplier: int
    input_left_shift: int


def logistic_tanh_params(input_scale: float, input_zero_point: int) -> UnaryActivationParams:
    """TFLM's int8 Logistic/Tanh Prepare: rescale the input to Q4.27 with a multiplier from
    frexp(scale * 2**27) (no 2**31 edge fix, as in TFLM), and the radius beyond which the
    output saturates."""
    q, left_shift = math.frexp(float(np.float32(input_scale)) * float(1 << 27))
    multiplier = int(round_half_away(q * (1 << 31)))
    radius = calculate_input_radius(ACTIVATION_INPUT_INTEGER_BITS, left_shift, 31)
    return UnaryActivationParams(int(input_zero_point), radius, multiplier, left_shift)


def _saturating_unary(x, p: UnaryActivationParams, body: Callable) -> np.ndarray:
    inp = np.asarray(x, dtype=np.int64) - p.input_zero_point
    q4 = multiply_by_quantized_multiplier(inp, p.input_multiplier, p.input_left_shift)
    inner = body(q4)
    out = np.where(inp <= -p.input_range_radius, -128,
                   np.where(inp >= p.input_range_radius, 127, inner))
    return out.astype(np.int8)


def logistic_int8(x, params: UnaryActivationParams) -> np.ndarray:
    """reference_integer_ops::Logistic (int8): output scale 1/256, zero point -128 assumed."""
    def body(q4):
        q0 = gm.logistic(q4, ACTIVATION_INPUT_INTEGER_BITS)
        return clamp(rounding_divide_by_pot(q0, 23).astype(np.int64) - 128, -128, 127)
    return _saturating_unary(x, params, body)


def tanh_int8(x, params: UnaryActivationParams) -> np.ndarray:
    """reference_integer_ops::Tanh (int8): output scale 1/128, zero point 0 assumed."""
    def body(q4):
        q0 = gm.tanh(q4, ACTIVATION_INPUT_INTEGER_BITS)
        return clamp(rounding_divide_by_pot(q0, 24), -128, 127)
    return _saturating_unary(x, params, body)


def unary_lut_int8(fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Tabulate an elementwise int8 -> int8 function over all 256 inputs.

    Entry i holds fn(int8(i)), i.e. the table is indexed by the input's bit pattern read as
    uint8 (TFLM's LUTLookup convention): C looks up `lut[(uint8_t)x]` (kiln_lut_s8).
    """
    inputs = np.arange(256, dtype=np.uint8).view(np.int8)
    out = np.asarray(fn(inputs))
    if out.shape != (256,) or np.any((out < -128) | (out > 127)):
        raise ValueError("unary_lut_int8: fn must map the 256 int8 inputs to 256 int8 values")
    return out.astype(np.int8)
