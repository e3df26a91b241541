"""Dead code elimination: drop no-op nodes, and nodes and constants no graph output depends on.

A no-op node computes its input unchanged: a Reshape to the same shape, a Transpose that
moves no data and keeps the shape (identity perm), a Pad by zero everywhere, a float Clip
with infinite bounds, an int8 Clip with infinite bounds or an int8 -> int8 Quantize whose
input and output share one quantization. Its readers read its input instead; a no-op that
produces a graph output hands the output name to its input's producer (or stays, as a copy,
when that input is itself a graph input, output or constant).

Needs: a verified graph. Keeps: graph inputs (part of the C API even when unused), graph
output names, and the execution order of the remaining nodes.
"""

from __future__ import annotations

import math

from codegen.ir.graph import Graph, Node
from codegen.ops.transpose import permutation
from codegen.passes.graph_edit import clone, drop_unused_values, substitute


def _same_type(g: Graph, a: str, b: str) -> bool:
    va, vb = g.values[a], g.values[b]
    return va.dtype == vb.dtype and va.shape == vb.shape and va.quant == vb.quant


def _moves_no_data(shape: tuple[int, ...], perm: tuple[int, ...]) -> bool:
    """Whether the axes of size > 1 keep their order (the bytes stay where they are)."""
    big = [p for p in perm if shape[p] != 1]
    return big == sorted(big)


def noop_input(node: Node, g: Graph) -> str | None:
    """The input this node passes through unchanged, or None when it computes something."""
    if len(node.outputs) != 1 or not node.inputs or not node.inputs[0]:
        return None
    x, y = node.inputs[0], node.outputs[0]
    if not _same_type(g, x, y):
        return None
    op, attrs = node.op, node.attrs
    if op == "Reshape":
        return x
    if op == "Transpose":
        shape = g.values[x].shape
        return x if _moves_no_data(shape, permutation(node, len(shape))) else None
    if op == "Pad":
        return x if not any(int(p) for p in attrs["pads"]) else None
    if op == "Clip":
        lo, hi = float(attrs["min"]), float(attrs["max"])
        return x if lo == -math.inf and hi == math.inf else None
    if op == "Quantize" and g.values[x].dtype == "int8":
        return x
    return None


def remove_noops(g: Graph) -> Graph:
    """The graph without its no-op nodes (see the module docstring)."""
    g = clone(g)
    kept = []
    for node in list(g.nodes):
        src = noop_input(node, g)
        if src is not None and substitute(g, node.outputs[0], src):
            continue
        kept.append(node)
    g.nodes = kept
    drop_unused_values(g)
    return g


def eliminate_dead_code(g: Graph) -> Graph:
    g = remove_noops(g)
    live = set(g.outputs)
    kept = []
    for node in reversed(g.nodes):
        if any(o in live for o in node.outputs):
            kept.append(node)
            live.update(i for i in node.inputs if i)
    kept.reverse()
    used = live | set(g.inputs) | {o for n in kept for o in n.outputs}
    values = {k: v for k, v in g.values.items() if k in used}
    return Graph(g.name, values, kept, list(g.inputs), list(g.outputs))
