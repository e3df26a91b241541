"""Fold QDQ patterns (Dequantize -> float op -> Quantize) into the int8 ops TFLite models use.

A QDQ model (ONNX QuantizeLinear/DequantizeLinear around float ops, as onnxruntime's
quantizer writes it) describes int8 arithmetic in float: each op reads dequantized int8
tensors and its result is quantized again. Such a chain is rewritten into the int8 op itself,
so that it runs on the same bit-exact int8 kernels as a TFLite model:

1. Quantize(Dequantize(x)) is x when both carry one quantization, else an int8 -> int8
   Quantize (a requantization).
2. Data movement reads a dequantized tensor unchanged: Reshape, Transpose, MaxPool2D (no
   fused activation), Pad (its value exactly representable) and Concat (all inputs with one
   quantization) move below the Dequantize and run on int8 (then rule 1 usually applies).
3. Quantize(op(Dequantize(x), ...)) for an op with int8 kernels becomes that op on int8
   with the Quantize's output quantization: Conv2D, DepthwiseConv2D and FullyConnected
   (float32 weights that are exactly int8 x per-channel scale, as DequantizeLinear of int8
   weights gives them, see int8_weights; float bias to int32 at scale s_in * s_w), Add, Sub,
   Mul, Mean, AveragePool2D, Clip, Sigmoid, Tanh, Softmax. The int8 op must pass its own
   check (TFLM's constraints, e.g. Softmax's output quantization); else the float op stays.
   In onnxruntime's numerics (`numerics="onnxruntime"`) a Softmax folds at any output
   quantization (`any_output_quant`: onnxruntime's QLinearSoftmax, which its graph optimizer
   makes of such a group, e.g. at the scale 1/255 its quantizer calibrates for a [0, 1] output),
   and a MatMul of two activations (attention's Q K^T, weights x V) folds into the int8 MatMul,
   onnxruntime's QLinearMatMul there (TFLite's numerics keep it float: TFLM's BatchMatMul would
   add a rounding step onnxruntime's float reference at ORT_ENABLE_BASIC does not take).

int8 arithmetic is TFLite's (fixed-point multipliers, round half away from zero), not
onnxruntime's (float multipliers, round half to even), so results may differ from
onnxruntime by one quantization step where a value falls near a rounding boundary. That is
why only QDQ graphs are folded (see `is_qdq_graph`): a TFLite model's Dequantize and
Quantize nodes are real TFLite Micro ops whose float arithmetic Kiln reproduces exactly.

Needs: a verified graph; run after layout (transposes between Dequantize and the op are
gone). Keeps: graph inputs and outputs and their names; every int8 op within one
quantization step of the float QDQ form it replaces.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ir.types import Quant
from codegen.ops.registry import get_op
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import (add_const, clone, insert_after, merged_origin, prune_dead_nodes,
                                       substitute)
from codegen.passes.int8_weights import exact_int8
from codegen.quant import check_softmax_output, dequantize_int8, quantize_float_to_int8

# Linear ops with int8 kernels: the weights' output-channel axis.
_LINEAR = {"Conv2D": 0, "DepthwiseConv2D": 3, "FullyConnected": 0}
# Ops whose int8 kernel computes Quantize(op(Dequantize(inputs))) for any quantization.
_REQUANTIZING = {"Add", "Sub", "Mul", "Mean", "AveragePool2D", "Clip", "Sigmoid", "Tanh", "Softmax",
                 "MaxPool2D"}
# Ops folded in onnxruntime's numerics only (see the module doc).
_REQUANTIZING_ORT = {"MatMul"}
# Ops that only move int8 bytes: the output keeps the input's quantization.
_MOVING = {"Reshape", "Transpose", "MaxPool2D", "Concat", "Pad"}


class _Ctx:
    def __init__(self, g: Graph, numerics: str):
        self.g = g
        self.prod = g.producers()
        self.numerics = numerics

    def dequantized(self, name: str) -> str | None:
        """x when `name` is Dequantize(x)."""
        node = self.prod.get(name)
        return node.inputs[0] if node is not None and node.op == "Dequantize" else None

    def readers(self, name: str) -> list[Node]:
        return [n for n in self.g.nodes if name in n.inputs]


def _cancel(ctx: _Ctx, q: Node) -> bool:
    """Rule 1: Quantize(Dequantize(x))."""
    g = ctx.g
    x = ctx.dequantized(q.inputs[0])
    if x is None:
        return False
    if g.values[x].quant == g.values[q.outputs[0]].quant and substitute(g, q.outputs[0], x):
        g.nodes = [n for n in g.nodes if n is not q]
        return True
    q.inputs = [x]  # an int8 -> int8 requantization
    return True


def _pad_value_exact(g: Graph, node: Node, quant: Quant) -> bool:
    value = np.float32(node.attrs["value"])
    code = quantize_float_to_int8(value, quant.s, quant.zp)
    return bool(dequantize_int8(code, quant.s, quant.zp) == value)


def _sink(ctx: _Ctx, node: Node) -> bool:
    """Rule 2: a data-movement op on Dequantize(x) runs on x, the Dequantize after it."""
    g = ctx.g
    if node.op not in _MOVING or len(node.outputs) != 1:
        return False
    xs = [ctx.dequantized(i) for i in node.inputs]
    if not xs or any(x is None for x in xs):
        return False
    quant = g.values[xs[0]].quant
    if quant is None or quant.per_channel or any(g.values[x].quant != quant for x in xs):
        return False
    if node.attrs.get("activation", "none") != "none":
        return False
    if node.op == "Pad" and not _pad_value_exact(g, node, quant):
        return False
    y = node.outputs[0]
    inner = g.fresh_name(f"{y}_q")
    node.inputs = list(xs)
    (dtype, shape), = get_op(node.op).infer(node, [g.values[x] for x in xs])
    g.add_value(dataclasses.replace(g.values[y], name=inner, dtype=dtype, shape=tuple(shape), quant=quant))
    node.outputs = [inner]
    dq = Node("Dequantize", g.fresh_name(f"{node.name}_dequantize"), [inner], [y], {}, node.origin)
    insert_after(g, node, dq)
    return True


def _int8_weights(ctx: _Ctx, op: Node, x: str) -> list[str] | None:
    """[weights, bias?] of a linear op as int8 / int32 constants, or None."""
    g = ctx.g
    w = g.values[op.inputs[1]]
    if not w.is_const or w.dtype != "float32":
        return None
    axis = _LINEAR[op.op]
    found = exact_int8(w.data, axis)
    if found is None:
        return None
    q, scales = found
    wq = add_const(g, f"{op.inputs[1]}_int8", q, Quant.of(scales, 0, axis))
    ins = [wq]
    b = op.inputs[2] if len(op.inputs) > 2 else ""
    if b:
        bv = g.values[b]
        if not bv.is_const or bv.dtype != "float32":
            return None
        bias_scale = g.values[x].quant.s * scales
        bq = np.rint(bv.data.astype(np.float64) / bias_scale)
        if np.abs(bq).max(initial=0) >= 2 ** 31:
            return None
        ins.append(add_const(g, f"{b}_int32", bq.astype(np.int32), Quant.of(bias_scale, 0, 0)))
    return ins


def _constant_operand(ctx: _Ctx, name: str) -> str | None:
    """A float constant operand of an elementwise op as an exactly equal int8 constant."""
    v = ctx.g.values[name]
    if not v.is_const or v.dtype != "float32":
        return None
    found = exact_int8(v.data, None)
    if found is None:
        return None
    q, scales = found
    return add_const(ctx.g, f"{name}_int8", q, Quant.of(scales[0], 0))


def _linear_inputs(ctx: _Ctx, op: Node) -> list[str] | None:
    x = ctx.dequantized(op.inputs[0])
    if x is None or ctx.g.values[x].quant is None or ctx.g.values[x].quant.per_channel:
        return None
    rest = _int8_weights(ctx, op, x)
    return None if rest is None else [x] + rest


def _requantizing_inputs(ctx: _Ctx, op: Node) -> list[str] | None:
    """Each input as int8: Dequantize(x) -> x, a float constant -> an equal int8 constant."""
    ins = []
    for name in op.inputs:
        x = (ctx.dequantized(name) or _constant_operand(ctx, name)) if name else ""
        if x is None:
            return None
        ins.append(x)
    return ins if any(ctx.dequantized(i) for i in op.inputs if i) else None


def _compute(ctx: _Ctx, q: Node) -> bool:
    """Rule 3: Quantize(op(Dequantize(x), ...)) -> op on int8."""
    g = ctx.g
    op = ctx.prod.get(q.inputs[0])
    if op is None or len(op.outputs) != 1 or op.outputs[0] in g.outputs:
        return False
    requantizing = _REQUANTIZING | (_REQUANTIZING_ORT if ctx.numerics == "onnxruntime" else set())
    if op.op not in _LINEAR and op.op not in requantizing:
        return False
    if len(ctx.readers(op.outputs[0])) != 1:
        return False
    saved_values = dict(g.values)  # constants made for a candidate that is then refused
    ins = _linear_inputs(ctx, op) if op.op in _LINEAR else _requantizing_inputs(ctx, op)
    if ins is None:
        g.values = saved_values
        return False
    attrs = dict(op.attrs)
    if op.op == "Softmax" and ctx.numerics == "onnxruntime" and not _tflm_softmax_output(g.values[q.outputs[0]].quant):
        attrs["any_output_quant"] = True
    candidate = Node(op.op, op.name, ins, [q.outputs[0]], attrs, merged_origin(op, q))
    try:
        (dtype, shape), = get_op(op.op).infer(candidate, [g.values[i] if i else None for i in ins])
        if (dtype, tuple(shape)) != ("int8", g.values[q.outputs[0]].shape):
            raise KilnError("not an int8 op")
        get_op(op.op).check(candidate, g)
    except KilnError:
        g.values = saved_values
        return False
    g.nodes = [candidate if n is q else n for n in g.nodes if n is not op]
    return True


def _tflm_softmax_output(quant: Quant | None) -> bool:
    """Whether TFLM's int8 Softmax can write `quant` (1/256, -128)."""
    if quant is None:
        return False
    try:
        check_softmax_output("int8", quant.s, quant.zp)
    except KilnError:
        return False
    return True


def _step(g: Graph, numerics: str) -> bool:
    ctx = _Ctx(g, numerics)
    for node in g.nodes:
        if node.op == "Quantize" and (_cancel(ctx, node) or _compute(ctx, node)):
            return True
        if _sink(ctx, node):
            return True
    return False


def is_qdq_graph(g: Graph) -> bool:
    """Whether int8 tensors only pass between Quantize (from float) and Dequantize nodes.

    Such a graph (an ONNX QDQ model) defines no int8 arithmetic of its own: its reference,
    onnxruntime, fuses each Dequantize -> op -> Quantize into an int8 kernel, and so may
    Kiln. A graph with int8 ops (a TFLite model: TFLite Micro runs its DEQUANTIZE, float op
    and QUANTIZE one by one, and Kiln must match it bit for bit) is left as it is.
    """
    movement = {"Reshape", "Transpose", "Concat"}
    saw_pair = False
    for n in g.nodes:
        int8_in = any(i and g.values[i].dtype == "int8" for i in n.inputs)
        int8_out = any(g.values[o].dtype == "int8" for o in n.outputs)
        if n.op == "Quantize":
            if int8_in:
                return False  # an int8 -> int8 requantization: int8 arithmetic
        elif n.op == "Dequantize":
            saw_pair = True
        elif (int8_in or int8_out) and n.op not in movement:
            return False
    return saw_pair


def fold_qdq(g: Graph, numerics: str = "tflite") -> Graph:
    """`numerics`: whose int8 arithmetic the build computes ("tflite" or "onnxruntime")."""
    g = clone(g)
    if not is_qdq_graph(g):
        return g
    budget = 10 * (len(g.nodes) + 10)
    while budget and _step(g, numerics):
        budget -= 1
        prune_dead_nodes(g)
    return eliminate_dead_code(g)
