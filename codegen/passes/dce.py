"""Dead code elimination: drop nodes and constants that no graph output depends on.

Needs: a verified graph. Keeps: graph inputs (part of the C API even when unused) and the
execution order of the remaining nodes.
"""

from __future__ import annotations

from codegen.ir.graph import Graph


def eliminate_dead_code(g: Graph) -> Graph:
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
