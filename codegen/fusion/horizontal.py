"""Horizontal fusion: sibling MAC ops reading the same input become one op whose output
channels are the siblings' concatenated (an inception block's parallel 1x1 convolutions as
one convolution writing the Concat's output directly).

A sibling set qualifies when the ops are the same op with the same attributes (a smaller
kernel may be padded with zero taps to the largest one, centred, which keeps every output
but costs MACs), dense over channels (weights [O, ..., C] with O the output channels), and
their outputs are exactly the inputs of one Concat along the channel (last) axis, read by
nothing else. int8 also needs every sibling's output quantization equal to the Concat's, so
that no requantization is lost; per-channel weight scales are concatenated (a per-tensor
scale repeated), which gives each output channel the multiplier it had.

Whether a qualifying set is fused is the cost model's decision (codegen/fusion/planner.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.ir.types import Quant, Value
from codegen.ops.registry import OpKind, get_op
from codegen.passes.graph_edit import clone, merged_origin


@dataclass(frozen=True)
class SiblingSet:
    nodes: tuple[str, ...]  # sibling node names, in the Concat's input order
    concat: str  # the Concat node they feed
    kernel: tuple[int, int]  # (KH, KW) of the fused op (the largest)
    padded_macs: int  # MACs added by zero taps (0 when all kernels are the same size)


def _weights(g: Graph, n: Node) -> Value | None:
    if len(n.inputs) < 2 or not n.inputs[1] or not g.values[n.inputs[1]].is_const:
        return None
    return g.values[n.inputs[1]]


def _dense(g: Graph, n: Node) -> bool:
    """Output channels are the weights' first axis and every one reads all input channels."""
    w = _weights(g, n)
    x, y = g.values[n.inputs[0]], g.values[n.outputs[0]]
    return (w is not None and len(n.outputs) == 1 and w.shape[0] == y.shape[-1] and w.shape[-1] == x.shape[-1]
            and len(w.shape) in (2, 4))


def _same_but_kernel(g: Graph, a: Node, b: Node) -> bool:
    """Same op, attributes equal up to the padding that centres a smaller kernel."""
    if a.op != b.op or set(a.attrs) != set(b.attrs):
        return False
    diff = {k for k in a.attrs if a.attrs[k] != b.attrs[k]}
    if diff - {"pads"}:
        return False
    return g.values[a.outputs[0]].shape[:-1] == g.values[b.outputs[0]].shape[:-1]


def sibling_sets(g: Graph) -> list[SiblingSet]:
    """Every sibling set feeding one channel Concat that horizontal fusion could merge."""
    producers = g.producers()
    consumers = g.consumers()
    found = []
    for cat in g.nodes:
        if get_op(cat.op).kind != OpKind.INJECTIVE or "axis" not in cat.attrs or len(cat.inputs) < 2:
            continue
        rank = len(g.values[cat.outputs[0]].shape)
        if int(cat.attrs["axis"]) % rank != rank - 1 or len(set(cat.inputs)) != len(cat.inputs):
            continue
        sibs = [producers.get(i) for i in cat.inputs]
        if any(s is None or get_op(s.op).kind != OpKind.OUT_ELEMWISE_FUSABLE for s in sibs):
            continue
        if any(len(consumers[s.outputs[0]]) != 1 or s.outputs[0] in g.outputs for s in sibs):
            continue
        first = sibs[0]
        if any(s.inputs[0] != first.inputs[0] or not _dense(g, s) or not _same_but_kernel(g, first, s)
               for s in sibs):
            continue
        if not _quant_compatible(g, sibs, cat):
            continue
        shapes = [g.values[s.inputs[1]].shape for s in sibs]
        if len({len(s) for s in shapes}) != 1:
            continue
        kh = max(s[1] for s in shapes) if len(shapes[0]) == 4 else 1
        kw = max(s[2] for s in shapes) if len(shapes[0]) == 4 else 1
        pads = {_pads_after_padding(s, w, kh, kw) for s, w in zip(sibs, shapes)}
        if len(pads) != 1 or None in pads:
            continue
        padded = sum(get_op(s.op).macs(s, g) * (kh * kw // (w[1] * w[2]) - 1) if len(w) == 4 else 0
                     for s, w in zip(sibs, shapes))
        found.append(SiblingSet(tuple(s.name for s in sibs), cat.name, (kh, kw), padded))
    return found


def _quant_compatible(g: Graph, sibs: list[Node], cat: Node) -> bool:
    qc = g.values[cat.outputs[0]].quant
    qs = [g.values[s.outputs[0]].quant for s in sibs]
    return all(q == qc for q in qs)


def _pads_after_padding(node: Node, w_shape, kh: int, kw: int) -> tuple[int, ...] | None:
    """The pads that keep `node`'s outputs once its kernel is padded to kh x kw (centred)."""
    if len(w_shape) != 4:
        return ()
    dh, dw = kh - w_shape[1], kw - w_shape[2]
    if dh % 2 or dw % 2:
        return None
    dil = node.attrs.get("dilations", (1, 1))
    if (dh or dw) and tuple(dil) != (1, 1):
        return None
    t, l, b, r = node.attrs.get("pads", (0, 0, 0, 0))
    return (t + dh // 2, l + dw // 2, b + dh // 2, r + dw // 2)


def merge_siblings(g: Graph, sibs: SiblingSet) -> Graph:
    """The graph with the siblings replaced by one op writing the Concat's output."""
    g = clone(g)
    by_name = {n.name: n for n in g.nodes}
    nodes = [by_name[n] for n in sibs.nodes]
    cat = by_name[sibs.concat]
    kh, kw = sibs.kernel
    ws = [g.values[n.inputs[1]] for n in nodes]
    data = np.concatenate([_pad_kernel(w.data, kh, kw) for w in ws], axis=0)
    w_name = g.fresh_name(f"{nodes[0].inputs[1]}_hfused")
    g.add_value(Value(w_name, ws[0].dtype, tuple(data.shape), _concat_quant(ws), data))
    inputs = [nodes[0].inputs[0], w_name]
    if any(len(n.inputs) > 2 and n.inputs[2] for n in nodes):
        b_name = g.fresh_name(f"{nodes[0].inputs[1]}_hfused_bias")
        bias = np.concatenate([_bias(g, n, w.shape[0]) for n, w in zip(nodes, ws)])
        dtype = "int32" if ws[0].dtype == "int8" else "float32"
        g.add_value(Value(b_name, dtype, (bias.size,), None, bias.astype(dtype)))
        inputs.append(b_name)
    attrs = dict(nodes[0].attrs)
    if len(ws[0].shape) == 4:
        attrs["pads"] = _pads_after_padding(nodes[0], ws[0].shape, kh, kw)
    merged = Node(nodes[0].op, g.fresh_name(f"{nodes[0].name}_hfused"), inputs, list(cat.outputs), attrs,
                  merged_origin(*nodes, cat) if all(n.origin for n in nodes + [cat]) else
                  tuple(n.name for n in nodes + [cat]))
    gone = {id(n) for n in nodes + [cat]}
    at = min(g.nodes.index(n) for n in nodes)
    rest = [n for n in g.nodes if id(n) not in gone]
    g.nodes = rest[:at] + [merged] + rest[at:]
    for n in nodes:
        del g.values[n.outputs[0]]
    return g


def _pad_kernel(w: np.ndarray, kh: int, kw: int) -> np.ndarray:
    if w.ndim != 4 or (w.shape[1], w.shape[2]) == (kh, kw):
        return w
    dh, dw = (kh - w.shape[1]) // 2, (kw - w.shape[2]) // 2
    return np.pad(w, ((0, 0), (dh, dh), (dw, dw), (0, 0)))


def _bias(g: Graph, n: Node, channels: int) -> np.ndarray:
    if len(n.inputs) > 2 and n.inputs[2]:
        return np.asarray(g.values[n.inputs[2]].data).reshape(-1)
    return np.zeros(channels, np.int32 if g.values[n.inputs[1]].dtype == "int8" else np.float32)


def _concat_quant(ws: list[Value]) -> Quant | None:
    if ws[0].quant is None:
        return None
    scales, zps = [], []
    for w in ws:
        q = w.quant
        n = w.shape[0]
        scales += list(q.scale) if q.per_channel else [q.scale[0]] * n
        zps += list(q.zero_point) if q.per_channel else [q.zero_point[0]] * n
    return replace(Quant.of(scales, zps, axis=0))
