"""int8 CumSum exactly as TFLite Micro computes it (cumsum.cc Prepare and reference_ops::CumSum).

Each input is offset by its zero point, shifted left by 20 bits and halved (ADD's common
scale with one input), the running sum kept in a wrapping int32 and rescaled to the output
by 2 * s_in / (2**20 * s_out). TFLM's running sum does not start at zero but at the scaled
input offset (-zero point): an exclusive CumSum's first result and every other one carry it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KilnError
from .fixedpoint import clamp, multiply_by_quantized_multiplier, wrap_int32
from .params import quantize_multiplier

LEFT_SHIFT = 20  # TFLM's kCumSumIntegerShift


@dataclass(frozen=True)
class CumSumParams:
    """Constants of TFLM's int8 CumSum (its OpData)."""

    input_offset: int
    input_multiplier: int
    input_shift: int
    output_offset: int
    output_multiplier: int
    output_shift: int


def cumsum_params(input_scale: float, input_zero_point: int, output_scale: float,
                  output_zero_point: int) -> CumSumParams:
    """TFLM CumSum CalculateOpData for int8: the input factor s / (2 s) = 1/2, the output factor
    2 s_in / (2**20 s_out) in double, which must stay below one (a right shift)."""
    twice = 2 * float(np.float32(input_scale))
    m_in, sh_in = quantize_multiplier(float(np.float32(input_scale)) / twice)
    m_out, sh_out = quantize_multiplier(twice / ((1 << LEFT_SHIFT) * float(np.float32(output_scale))))
    if sh_out > 0:
        raise KilnError(f"CUMSUM: an int8 output scale below 2**-19 of the input scale ({output_scale!r} against "
                        f"{input_scale!r}) is not supported (TFLM's output rescale must be below one)")
    return CumSumParams(-int(input_zero_point), m_in, sh_in, int(output_zero_point), m_out, sh_out)


def cumsum_int8(x, p: CumSumParams, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """reference_ops::CumSum for int8 along `axis`."""
    def scaled(v):
        return multiply_by_quantized_multiplier(wrap_int32(np.asarray(v, np.int64) << LEFT_SHIFT),
                                                p.input_multiplier, p.input_shift).astype(np.int64)

    x = np.asarray(x)
    y = np.flip(x, axis) if reverse else x
    terms = scaled(y.astype(np.int64) + p.input_offset)
    running = np.cumsum(terms, axis=axis)
    if exclusive:
        running = running - terms
    acc = wrap_int32(running + scaled(p.input_offset))
    out = clamp(multiply_by_quantized_multiplier(acc, p.output_multiplier, p.output_shift).astype(np.int64)
                + p.output_offset, -128, 127).astype(np.int8)
    return np.ascontiguousarray(np.flip(out, axis) if reverse else out)
