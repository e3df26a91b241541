"""Collapse chains of Reshape (ONNX Flatten / Squeeze / Unsqueeze / Reshape) into one view.

Reshape(Reshape(x, s1), s2) is Reshape(x, s2): only the last shape matters, the elements stay
in order. A Reshape read by a FullyConnected without keep_dims is dropped for it as well: that
op reads its input as rows of K elements, whatever the input's shape. A Reshape to the same
shape is a no-op that DCE removes.

Needs: a verified graph. Keeps: every output's value bit for bit, output names.
"""

from __future__ import annotations

from codegen.ir.graph import Graph
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import clone, merged_origin


def collapse_reshapes(g: Graph) -> Graph:
    g = clone(g)
    changed = False
    prod = g.producers()
    for node in g.nodes:
        src = prod.get(node.inputs[0]) if node.inputs else None
        if src is None or src.op != "Reshape":
            continue
        x, via = src.inputs[0], node.inputs[0]
        if g.values[x].quant != g.values[via].quant:
            continue
        if node.op == "Reshape":
            node.inputs = [x]
            node.origin = merged_origin(src, node)
            changed = True
        elif node.op == "FullyConnected" and not node.attrs["keep_dims"]:
            node.inputs = [x] + node.inputs[1:]
            changed = True
    return eliminate_dead_code(g) if changed else g
