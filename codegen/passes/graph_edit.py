"""Small editing helpers the passes share (not a pass).

Passes are pure: each starts from `clone(g)` and edits only the copy. Values keep their
names where they can, so that graph outputs keep the names of the source model and the
generated C stays traceable; a node that is removed hands its output name to whatever now
computes that value (`substitute`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from codegen.ir.builder import dtype_of
from codegen.ir.graph import Graph, Node
from codegen.ir.types import Quant, Value
from codegen.ops.registry import get_op, node_attrs


def clone(g: Graph) -> Graph:
    """A copy whose nodes and values can be edited; constant arrays are shared (never written)."""
    values = {k: dataclasses.replace(v) for k, v in g.values.items()}
    nodes = [Node(n.op, n.name, list(n.inputs), list(n.outputs), dict(n.attrs), tuple(n.origin))
             for n in g.nodes]
    return Graph(g.name, values, nodes, list(g.inputs), list(g.outputs))


def sole_consumer(g: Graph, name: str) -> Node | None:
    """The one node reading `name`, if exactly one does and it is not a graph output."""
    if name in g.outputs:
        return None
    users = [n for n in g.nodes if name in n.inputs]
    if len(users) != 1 or users[0].inputs.count(name) != 1:
        return None
    return users[0]


def is_boundary(g: Graph, name: str) -> bool:
    """Graph inputs, outputs and constants: values whose name or storage a pass must keep."""
    return name in g.inputs or name in g.outputs or g.values[name].is_const


def replace_uses(g: Graph, old: str, new: str) -> None:
    """Every node input and graph output that reads `old` reads `new` instead."""
    for n in g.nodes:
        n.inputs = [new if i == old else i for i in n.inputs]
    g.outputs = [new if o == old else o for o in g.outputs]


def rename_value(g: Graph, old: str, new: str) -> None:
    """Give a computed value another name everywhere (`new` must be free)."""
    value = g.values.pop(old)
    g.values[new] = dataclasses.replace(value, name=new)
    for n in g.nodes:
        n.inputs = [new if i == old else i for i in n.inputs]
        n.outputs = [new if o == old else o for o in n.outputs]
    g.outputs = [new if o == old else o for o in g.outputs]
    g.inputs = [new if i == old else i for i in g.inputs]


def substitute(g: Graph, old: str, new: str) -> bool:
    """Make the value `new` stand for `old` (same type) in every use of `old`.

    When `old` is a graph output, `new` takes its name instead (outputs keep the model's
    names) and the node that computed `old` is left with a dead output for DCE. That is
    impossible when `new` is itself a graph input, output or constant: then nothing changes
    and False is returned.
    """
    if old == new:
        return True
    if old not in g.outputs:
        replace_uses(g, old, new)
        return True
    if is_boundary(g, new):
        return False
    dead = g.fresh_name(f"{old}_unused")
    rename_value(g, old, dead)
    replace_uses(g, dead, new)
    rename_value(g, new, old)
    return True


def drop_unused_values(g: Graph) -> None:
    """Forget values that no node, input or output mentions (constants left behind by a rewrite)."""
    used = set(g.inputs) | set(g.outputs)
    for n in g.nodes:
        used.update(i for i in n.inputs if i)
        used.update(n.outputs)
    g.values = {k: v for k, v in g.values.items() if k in used}


def prune_dead_nodes(g: Graph) -> None:
    """Remove, in place, the nodes no graph output depends on (a cheap DCE for pass loops)."""
    live = set(g.outputs)
    kept = []
    for node in reversed(g.nodes):
        if any(o in live for o in node.outputs):
            kept.append(node)
            live.update(i for i in node.inputs if i)
    kept.reverse()
    g.nodes = kept


def add_const(g: Graph, base: str, data: np.ndarray, quant: Quant | None = None) -> str:
    """A new constant value named after `base` (made unique); returns its name."""
    arr = np.array(np.asarray(data), order="C", copy=True)
    name = g.fresh_name(base)
    g.add_value(Value(name, dtype_of(arr), tuple(arr.shape), quant, arr))
    return name


def make_node(g: Graph, op: str, inputs: Sequence[str], *, name: str, origin: Sequence[str],
              out: str | None = None, quant: Quant | None = None, **attrs: Any) -> Node:
    """A new single-output node (not yet placed in g.nodes); its output type comes from the op.

    `out` names the output (a fresh name derived from `name` when None or taken).
    """
    opdef = get_op(op)
    node_name = g.fresh_name(name)
    node = Node(op, node_name, list(inputs), [], node_attrs(opdef, attrs, node_name), tuple(origin))
    (dtype, shape), = opdef.infer(node, [g.values[i] if i else None for i in inputs])
    out_name = out if out is not None and out not in g.values else g.fresh_name(out or node_name)
    g.add_value(Value(out_name, dtype, tuple(int(d) for d in shape), quant))
    node.outputs.append(out_name)
    return node


def insert_before(g: Graph, anchor: Node, *new: Node) -> None:
    idx = next(k for k, n in enumerate(g.nodes) if n is anchor)
    g.nodes[idx:idx] = list(new)


def insert_after(g: Graph, anchor: Node, *new: Node) -> None:
    idx = next(k for k, n in enumerate(g.nodes) if n is anchor)
    g.nodes[idx + 1:idx + 1] = list(new)


def merged_origin(*nodes: Node) -> tuple[str, ...]:
    """The source-model nodes a fused node stands for, in order, without repeats."""
    return tuple(dict.fromkeys(o for n in nodes for o in n.origin))

