"""Checks shared by the int8 linear ops (Conv2D, DepthwiseConv2D, FullyConnected): what TFLM's
reference kernels, and so Kiln's, can run. The arithmetic itself is codegen/quant/linear.py."""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.common import check_activation
from codegen.quant.linear import fold_input_offset, graph_bias


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


def check_int8_accumulator(node: Node, g: Graph, w_rows: np.ndarray, channels: int) -> None:
    """Refuse at check time a node whose folded accumulator could overflow (see below)."""
    fold_input_offset(node, w_rows, graph_bias(node, g, channels), g.values[node.inputs[0]].quant.zp)
