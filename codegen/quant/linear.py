"""int8 arithmetic of the linear ops (Conv2D, DepthwiseConv2D, FullyConnected): the constants
TFLM's Prepare computes, the requantization, and the input-offset folding every kernel uses.

TFLite Micro computes each output as
    acc = sum over taps of (x - input_zp) * w   (int32; taps in the padding are skipped)
    acc += bias
    y = clamp(multiply_by_quantized_multiplier(acc, multiplier[c], shift[c]) + output_zp)
with symmetric weights (zero point 0) and a per-output-channel multiplier/shift.

Kiln's kernels compute the same integer with the input offset folded into the bias at
compile time, bias'[c] = bias[c] - input_zp * sum(w[c]), so that the inner loop is a plain
sum of x * w; a tap in the padding adds input_zp * w back, since TFLM skips it. Both sums are
equal as integers. `fold_input_offset` proves that no partial sum of the folded kernel can
leave int32 (so its C is free of overflow), which makes its result equal to TFLM's (which
accumulates in int32 and therefore agrees with the exact sum modulo 2**32).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.quant.fixedpoint import (multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_s64,
                                     wrap_int32)
from codegen.quant.params import (conv_output_multipliers, fully_connected_output_multiplier,
                                  quantized_activation_range)

INT32_MAX = (1 << 31) - 1
# |x| and |input_zp| are at most 128 for int8, so every term a folded kernel adds to its
# accumulator (x * w or input_zp * w) is at most 128 * |w|.
_MAX_ABS_INT8 = 128


@dataclass(frozen=True)
class LinearInt8:
    """Requantization constants of one int8 linear op (TFLM's OpData after Prepare)."""

    input_zp: int
    output_zp: int
    act_min: int
    act_max: int
    multiplier: np.ndarray  # int32 [out channels]
    shift: np.ndarray  # int32 [out channels], TFLM's convention (> 0: left shift)


def linear_int8_params(node: Node, g: Graph, channels: int, fc_per_tensor: bool = False
                       ) -> LinearInt8:
    """The constants TFLM's Prepare computes for this node, one multiplier/shift per channel.

    Conv2D/DepthwiseConv2D and per-channel FullyConnected rescale by
    double(s_in) * double(s_w[c]) / double(s_out); per-tensor FullyConnected
    (`fc_per_tensor`) takes the s_in * s_w product in float32 first, as TFLM does.
    """
    x, w = node.inputs[0], node.inputs[1]
    qx, qw, qy = g.values[x].quant, g.values[w].quant, g.values[node.outputs[0]].quant
    if fc_per_tensor and not qw.per_channel:
        m, s = fully_connected_output_multiplier(qx.s, qw.scale[0], qy.s)
        mult = np.full(channels, m, dtype=np.int32)
        shift = np.full(channels, s, dtype=np.int32)
    else:
        scales = np.broadcast_to(np.asarray(qw.scale, dtype=np.float64), (channels,))
        mult, shift = conv_output_multipliers(qx.s, scales, qy.s)
    lo, hi = quantized_activation_range(node.attrs["activation"], qy.s, qy.zp, g.values[node.outputs[0]].dtype)
    return LinearInt8(qx.zp, qy.zp, lo, hi, np.asarray(mult, np.int32), np.asarray(shift, np.int32))


def requantize(acc: np.ndarray, p: LinearInt8) -> np.ndarray:
    """int8 outputs from exact accumulators (bias included), channels on the last axis.

    The accumulator is reduced to int32 first, as TFLM's int32 arithmetic leaves it.
    """
    scaled = multiply_by_quantized_multiplier(wrap_int32(acc), p.multiplier, p.shift)
    out = scaled.astype(np.int64) + p.output_zp
    return np.clip(out, p.act_min, p.act_max).astype(np.int8)


def requantize_s16(acc: np.ndarray, p: LinearInt8) -> np.ndarray:
    """int16 outputs of TFLM's 16x8 linear kernels from exact int64 accumulators (bias
    included), channels on the last axis: the int64 MultiplyByQuantizedMultiplier."""
    scaled = multiply_by_quantized_multiplier_s64(acc, p.multiplier, p.shift)
    return np.clip(scaled.astype(np.int64) + p.output_zp, p.act_min, p.act_max).astype(np.int16)


def bias_or_zero(args: list, channels: int) -> np.ndarray:
    """The bias argument of a reference call as int64 (zeros when the input is absent)."""
    b = args[2] if len(args) > 2 else None
    return np.zeros(channels, np.int64) if b is None else np.asarray(b, np.int64).reshape(channels)


def graph_bias(node: Node, g: Graph, channels: int) -> np.ndarray:
    """The node's constant bias as int64 (zeros when the optional input is absent)."""
    b = node.inputs[2] if len(node.inputs) > 2 else ""
    return np.zeros(channels, np.int64) if not b else g.values[b].data.astype(np.int64).reshape(-1)


def fold_input_offset(node: Node, w_rows: np.ndarray, bias: np.ndarray, input_zp: int
                      ) -> np.ndarray:
    """bias'[c] = bias[c] - input_zp * sum(w_rows[c]) as int32, for kernels whose inner loop
    is a plain sum of x * w.

    `w_rows` holds each output channel's weights in one row. Refuses (KilnError) when some
    partial sum of the kernel, |bias'| + 128 * sum|w|, could exceed int32: such a kernel's C
    could overflow, and no int8 model of a size that runs on a microcontroller comes near it.
    """
    rows = np.asarray(w_rows, dtype=np.int64)
    folded = np.asarray(bias, np.int64) - int(input_zp) * rows.sum(axis=1)
    bound = np.abs(folded) + _MAX_ABS_INT8 * np.abs(rows).sum(axis=1)
    if bound.size and int(bound.max()) > INT32_MAX:
        c = int(bound.argmax())
        raise KilnError(f"int8 {node.op}: the int32 accumulator of output channel {c} could "
                        f"overflow (worst case {int(bound[c])}); not supported", node=node.name)
    return folded.astype(np.int32)
