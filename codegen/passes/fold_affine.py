"""Fold Mul / Add / Sub by per-channel constants into the float linear op before them.

conv(x, W) + b, then * c, + c or - c with a constant c that is one value per output
channel (or a scalar), is the same linear op with W * c and b * c, or b + c, b - c. This is
also how a MatMul (now a FullyConnected) followed by Add(bias) becomes one FullyConnected
with a bias. The elementwise node's fused activation moves to the linear op.

Needs: a verified graph; channels-last layout (the channel is the last axis). Keeps: every
output's value (to float32 rounding), output names. Float32 only; the linear op must have
no fused activation and no other reader.
"""

from __future__ import annotations

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import clone, merged_origin
from codegen.passes.linear_fold import foldable_linear, per_channel, scale_shift


def _match(g: Graph, node: Node) -> tuple[Node, np.ndarray | None, np.ndarray | None] | None:
    """(linear node, k, s) when `node` computes linear(...) * k + s by constants."""
    if node.op not in ("Mul", "Add", "Sub") or len(node.inputs) != 2:
        return None
    out_shape = g.values[node.outputs[0]].shape
    orders = [(0, 1)] if node.op == "Sub" else [(0, 1), (1, 0)]
    for a, b in orders:
        linear = foldable_linear(g, node.inputs[a])
        if linear is None or g.values[node.inputs[a]].shape != out_shape:
            continue
        c = per_channel(g, node.inputs[b], out_shape)
        if c is None:
            continue
        if node.op == "Mul":
            return linear, c, None
        return linear, None, (c if node.op == "Add" else -c)
    return None


def fold_channel_affine(g: Graph) -> Graph:
    g = clone(g)
    changed = False
    for node in list(g.nodes):
        found = _match(g, node)
        if found is None:
            continue
        linear, k, s = found
        scale_shift(g, linear, k, s)
        linear.attrs["activation"] = node.attrs.get("activation", "none")
        linear.outputs = [node.outputs[0]]
        linear.origin = merged_origin(linear, node)
        g.nodes = [n for n in g.nodes if n is not node]
        changed = True
    return eliminate_dead_code(g) if changed else g
