"""Common subexpression elimination: identical constants and identical nodes computed once.

Two constants are identical when dtype, shape, quantization and every byte agree; two nodes
when op, attributes and inputs (after the constants are merged) agree and their outputs have
the same types. The later one's readers read the earlier one's outputs. Typical sources: the
ONNX frontend's per-node NCHW -> NHWC transposes of one tensor read by several convolutions,
repeated bias or scale initializers.

Needs: a verified graph. Keeps: graph input and output names (a duplicate that computes a
graph output is kept as it is), execution order.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import clone, replace_uses


def _freeze(value: Any) -> Any:
    """A hashable form of an attribute value (lists and tuples compare alike)."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, np.generic):
        return value.item()
    return value


def _const_key(g: Graph, name: str) -> tuple:
    v = g.values[name]
    digest = hashlib.sha256(np.ascontiguousarray(v.data).tobytes()).hexdigest()
    return (v.dtype, v.shape, v.quant, digest)


def _node_key(g: Graph, node: Node) -> tuple:
    attrs = tuple(sorted((k, _freeze(v)) for k, v in node.attrs.items()))
    outs = tuple((g.values[o].dtype, g.values[o].shape, g.values[o].quant) for o in node.outputs)
    return (node.op, attrs, tuple(node.inputs), outs)


def eliminate_common_subexpressions(g: Graph) -> Graph:
    g = clone(g)
    merged = False
    first_const: dict[tuple, str] = {}
    for v in list(g.values.values()):
        if not v.is_const or v.name in g.outputs:
            continue
        key = _const_key(g, v.name)
        if key in first_const:
            replace_uses(g, v.name, first_const[key])
            merged = True
        else:
            first_const[key] = v.name
    seen: dict[tuple, Node] = {}
    for node in g.nodes:
        key = _node_key(g, node)
        earlier = seen.get(key)
        if earlier is None or any(o in g.outputs for o in node.outputs):
            seen.setdefault(key, node)
            continue
        for mine, theirs in zip(node.outputs, earlier.outputs):
            replace_uses(g, mine, theirs)
        merged = True
    return eliminate_dead_code(g) if merged else g
