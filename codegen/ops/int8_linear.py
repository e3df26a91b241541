"""int8 arithmetic shared by the linear ops: Conv2D, DepthwiseConv2D and FullyConnected.

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
from codegen.ops.common import check_activation
from codegen.quant import (conv_output_multipliers, fully_connected_output_multiplier,
                           multiply_by_quantized_multiplier, quantized_activation_range)
from codegen.quant.fixedpoint import wrap_int32

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


def _per_tensor(node: Node, g: Graph, name: str, role: str):
    v = g.values[name]
    if v.dtype != "int8":
        raise KilnError(f"int8 {node.op} needs an int8 {role}, '{name}' is {v.dtype}", node=node.name)
    if v.quant is None:
        raise KilnError(f"int8 {role} '{name}' has no quantization parameters", node=node.name)
    if v.quant.per_channel:
        raise KilnError(f"{role} '{name}' is quantized per channel; {node.op} needs one scale",
                        node=node.name)
    if not -128 <= v.quant.zp <= 127:
        raise KilnError(f"{role} '{name}' zero point {v.quant.zp} is outside int8", node=node.name)
    return v.quant


def check_int8_linear(node: Node, g: Graph, weight_axis: int, channels: int) -> None:
    """Refuse an int8 linear node that TFLM's reference kernels (and so Kiln's) cannot run.

    Needs: int8 input and output quantized per tensor; constant int8 weights, symmetric
    (zero point 0), quantized per tensor or per channel along `weight_axis` with `channels`
    scales; an optional constant int32 bias of `channels` elements.
    """
    x, w, b = (node.inputs + [""])[:3]
    _per_tensor(node, g, x, "input")
    _per_tensor(node, g, node.outputs[0], "output")
    check_activation(node)
    wv = g.values[w]
    if wv.dtype != "int8":
        raise KilnError(f"int8 {node.op} with {wv.dtype} weights '{w}' has no kernel (weights must "
                        "be int8)", node=node.name)
    if not wv.is_const:
        raise KilnError(f"int8 {node.op} needs constant weights, '{w}' is computed at run time",
                        node=node.name)
    q = wv.quant
    if q is None:
        raise KilnError(f"int8 weights '{w}' have no quantization parameters", node=node.name)
    if q.per_channel and (q.axis != weight_axis or len(q.scale) != channels):
        raise KilnError(f"weights '{w}' are quantized along axis {q.axis} with {len(q.scale)} "
                        f"scales; {node.op} needs {channels} scales along axis {weight_axis}",
                        node=node.name)
    if any(z != 0 for z in q.zero_point):
        raise KilnError(f"weights '{w}' are not symmetric (zero point "
                        f"{next(z for z in q.zero_point if z)}); int8 {node.op} needs zero point 0",
                        node=node.name)
    if b:
        bv = g.values[b]
        if bv.dtype != "int32" or not bv.is_const:
            raise KilnError(f"int8 {node.op} needs a constant int32 bias, '{b}' is "
                            f"{'a constant ' if bv.is_const else 'a computed '}{bv.dtype}",
                            node=node.name)
        if bv.size != channels:
            raise KilnError(f"bias '{b}' has {bv.size} elements, expected {channels}", node=node.name)


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
    lo, hi = quantized_activation_range(node.attrs["activation"], qy.s, qy.zp)
    return LinearInt8(qx.zp, qy.zp, lo, hi, np.asarray(mult, np.int32), np.asarray(shift, np.int32))


def requantize(acc: np.ndarray, p: LinearInt8) -> np.ndarray:
    """int8 outputs from exact accumulators (bias included), channels on the last axis.

    The accumulator is reduced to int32 first, as TFLM's int32 arithmetic leaves it.
    """
    scaled = multiply_by_quantized_multiplier(wrap_int32(acc), p.multiplier, p.shift)
    out = scaled.astype(np.int64) + p.output_zp
    return np.clip(out, p.act_min, p.act_max).astype(np.int8)


def bias_or_zero(args: list, channels: int) -> np.ndarray:
    """The bias argument of a reference call as int64 (zeros when the input is absent)."""
    b = args[2] if len(args) > 2 else None
    return np.zeros(channels, np.int64) if b is None else np.asarray(b, np.int64).reshape(channels)


def graph_bias(node: Node, g: Graph, channels: int) -> np.ndarray:
    """The node's constant bias as int64 (zeros when the optional input is absent)."""
    b = node.inputs[2] if len(node.inputs) > 2 else ""
    return np.zeros(channels, np.int64) if not b else g.values[b].data.astype(np.int64).reshape(-1)


def check_int8_accumulator(node: Node, g: Graph, w_rows: np.ndarray, channels: int) -> None:
    """Refuse at check time a node whose folded accumulator could overflow (see below)."""
    fold_input_offset(node, w_rows, graph_bias(node, g, channels), g.values[node.inputs[0]].quant.zp)


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


def lower_int8_linear(node: Node, ctx, channels: int, w_rows: np.ndarray,
                      fc_per_tensor: bool = False):
    """The int8 fields of a linear kernel's params struct and its folded bias constant.

    Multipliers and shifts are flash arrays of one entry per output channel (repeated when
    the weights have a single scale), so every int8 linear kernel has one code path.
    """
    p = linear_int8_params(node, ctx.g, channels, fc_per_tensor)
    folded = fold_input_offset(node, w_rows, graph_bias(node, ctx.g, channels), p.input_zp)
    params = {"input_zp": p.input_zp, "output_zp": p.output_zp, "act_min": p.act_min,
              "act_max": p.act_max,
              "multiplier": ctx.constant(node, "multiplier", p.multiplier, "int32"),
              "shift": ctx.constant(node, "shift", p.shift, "int32")}
    return params, ctx.constant(node, "bias", folded, "int32")
