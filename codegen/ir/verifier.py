"""Structural checks of a graph; run after import and (in tests) after every pass."""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph
from codegen.ops.registry import get_op


def verify_graph(g: Graph) -> None:
    """Raise KilnError naming the first node or value that breaks an invariant.

    Invariants: every value is defined once (input, constant or node output) before it is
    used; every op is registered with known attributes and a valid arity; stored output
    types agree with the op's inference; constants hold data of their declared type.
    """
    defined: set[str] = set()
    for name in g.inputs:
        if name not in g.values:
            raise KilnError("graph input has no value", node=name)
        if g.values[name].is_const:
            raise KilnError("graph input is also a constant", node=name)
        defined.add(name)
    # a streaming model's variables, once lowering takes them out of the inputs (codegen/lower/state.py)
    defined.update(name for name, v in g.values.items() if v.state is not None)
    for v in g.constants():
        if v.data.shape != v.shape or str(v.data.dtype) != str(np.dtype(np.bool_ if v.dtype == "bool" else v.dtype)):
            raise KilnError(f"constant data {v.data.dtype}{list(v.data.shape)} disagrees with its "
                            f"declared type {v.type_str()}", node=v.name)
        defined.add(v.name)
    for v in g.values.values():
        if any(d < 0 for d in v.shape):
            raise KilnError(f"negative dimension in shape {list(v.shape)}", node=v.name)
    for node in g.nodes:
        op = get_op(node.op)
        lo, hi = op.arity
        if not lo <= len(node.inputs) <= hi:
            raise KilnError(f"{node.op} takes {lo}..{hi} inputs, got {len(node.inputs)}", node=node.name)
        if set(node.attrs) != set(op.attributes):
            raise KilnError(f"{node.op} attributes {sorted(node.attrs)} differ from the schema "
                            f"{sorted(op.attributes)}", node=node.name)
        for i in node.inputs:
            if i and i not in defined:
                raise KilnError(f"input '{i}' is used before it is defined", node=node.name)
        ins = [g.values[i] if i else None for i in node.inputs]
        types = op.infer(node, ins)
        if len(types) != len(node.outputs):
            raise KilnError(f"{node.op} has {len(node.outputs)} outputs, expected {len(types)}", node=node.name)
        for out, (dtype, shape) in zip(node.outputs, types):
            if out in defined:
                raise KilnError(f"value '{out}' is defined twice", node=node.name)
            v = g.values.get(out)
            if v is None:
                raise KilnError(f"output '{out}' has no value", node=node.name)
            if v.dtype != dtype or tuple(v.shape) != tuple(shape):
                raise KilnError(f"output '{out}' is {v.type_str()} but {node.op} gives "
                                f"{dtype}[{'x'.join(map(str, shape))}]", node=node.name)
            defined.add(out)
    for name in g.outputs:
        if name not in defined:
            raise KilnError("graph output is never computed", node=name)
