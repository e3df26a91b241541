"""Checks shared by the int8 and int16 (16x8: int16 activations, int8 weights, int64 bias) linear
ops (Conv2D, DepthwiseConv2D, FullyConnected): what TFLM's reference kernels, and so Kiln's, can
run. The arithmetic itself is codegen/quant/linear.py."""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.common import check_activation
from codegen.quant.linear import fold_input_offset, graph_bias


def _per_tensor(node: Node, g: Graph, name: str, role: str, dtype: str = "int8"):
    v = g.values[name]
    if v.dtype != dtype:
        raise KilnError(f"{dtype} {node.op} needs an {dtype} {role}, '{name}' is {v.dtype}", node=node.name)
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
    _check_int8_weights(node, g, weight_axis, channels, bias_dtype="int32")


def _check_int8_weights(node: Node, g: Graph, weight_axis: int, channels: int, bias_dtype: str) -> None:
    """Constant symmetric int8 weights with one scale or `channels` scales along
    `weight_axis`, an optional constant bias of `bias_dtype`, a known fused activation."""
    x, w, b = (node.inputs + [""])[:3]
    check_activation(node)
    wv, kind = g.values[w], g.values[x].dtype
    if wv.dtype != "int8":
        raise KilnError(f"{kind} {node.op} with {wv.dtype} weights '{w}' has no kernel (weights must "
                        "be int8)", node=node.name)
    if not wv.is_const:
        raise KilnError(f"{kind} {node.op} needs constant weights, '{w}' is computed at run time",
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
                        f"{next(z for z in q.zero_point if z)}); {kind} {node.op} needs zero point 0",
                        node=node.name)
    if b:
        bv = g.values[b]
        if bv.dtype != bias_dtype or not bv.is_const:
            raise KilnError(f"{kind} {node.op} needs a constant {bias_dtype} bias, '{b}' is "
                            f"{'a constant ' if bv.is_const else 'a computed '}{bv.dtype}",
                            node=node.name)
        if bv.size != channels:
            raise KilnError(f"bias '{b}' has {bv.size} elements, expected {channels}", node=node.name)


def check_int8_accumulator(node: Node, g: Graph, w_rows: np.ndarray, channels: int) -> None:
    """Refuse at check time a node whose folded accumulator could overflow (see below)."""
    fold_input_offset(node, w_rows, graph_bias(node, g, channels), g.values[node.inputs[0]].quant.zp)


# TFLM's int64 MultiplyByQuantizedMultiplier assumes |acc| < 2**47.
_INT16_ACC_LIMIT = 1 << 47


def check_int16_linear(node: Node, g: Graph, weight_axis: int, channels: int, w_rows: np.ndarray) -> None:
    """Refuse an int16 (16x8) linear node that TFLM's reference kernels (and so Kiln's) cannot run.

    Needs: int16 input and output quantized per tensor with zero point 0 (TFLM's int16
    convolutions ignore zero points); int8 weights as for int8; an optional constant int64
    bias (an int32 bias makes TFLM accumulate in int32, which Kiln does not reproduce); every
    accumulator within the 2**47 its output stage assumes (`w_rows`: each channel's weights).
    """
    for name, role in ((node.inputs[0], "input"), (node.outputs[0], "output")):
        q = _per_tensor(node, g, name, role, "int16")
        if q.zp != 0:
            raise KilnError(f"int16 {node.op} needs a zero point of 0 on its {role}, '{name}' has {q.zp}",
                            node=node.name)
    b = node.inputs[2] if len(node.inputs) > 2 else ""
    if b and g.values[b].dtype == "int32":
        raise KilnError(f"int16 {node.op} with an int32 bias '{b}' is not supported (TFLite Micro then "
                        "accumulates in int32; Kiln's int16 kernels take an int64 bias)", node=node.name)
    _check_int8_weights(node, g, weight_axis, channels, bias_dtype="int64")
    bound = np.abs(graph_bias(node, g, channels)) + 32768 * np.abs(np.asarray(w_rows, np.int64)).sum(axis=1)
    if bound.size and int(bound.max()) >= _INT16_ACC_LIMIT:
        c = int(bound.argmax())
        raise KilnError(f"int16 {node.op}: the accumulator of output channel {c} could reach {int(bound[c])}, "
                        "beyond the 2**47 TFLite Micro's int16 output stage assumes; not supported",
                        node=node.name)
