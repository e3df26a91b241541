"""A compact way to build graphs: used by the frontends, the passes and the tests."""

from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.ir.types import Quant, Value, compute_dtype, dtype_name, np_dtype
from codegen.ops.registry import get_op, node_attrs

def dtype_of(array: np.ndarray) -> str:
    """The Kiln dtype of a constant array: one that kernels compute with (not a storage-only one)."""
    dtype = dtype_name(array.dtype)
    if dtype is None or compute_dtype(dtype) != dtype:
        raise ValueError(f"unsupported array dtype {array.dtype}")
    return dtype


class GraphBuilder:
    """Adds inputs, constants and nodes in execution order; output types come from op inference.

    >>> b = GraphBuilder("mlp")
    >>> x = b.input("x", "float32", (1, 4))
    >>> y = b.node("FullyConnected", [x, b.const("w", np.ones((3, 4), np.float32))])
    >>> g = b.output(y).build()
    """

    def __init__(self, name: str):
        self.g = Graph(name)
        self._counter: dict[str, int] = {}

    def _name(self, base: str, taken) -> str:
        """`base`, or `base_N` for the first N that is not in `taken` (stable across runs)."""
        base = re.sub(r"\s+", "_", base) or "v"
        if base not in taken:
            return base
        n = self._counter.get(base, 1)
        while f"{base}_{n}" in taken:
            n += 1
        self._counter[base] = n + 1
        return f"{base}_{n}"

    def input(self, name: str, dtype: str, shape: Sequence[int], quant: Quant | None = None,
              open_dims: Sequence[int] = ()) -> str:
        self.g.add_value(Value(name, dtype, tuple(int(d) for d in shape), quant, open_dims=tuple(open_dims)))
        self.g.inputs.append(name)
        return name

    def const(self, name: str, data: Any, dtype: str | None = None, quant: Quant | None = None) -> str:
        arr = np.asarray(data)
        if dtype is not None:
            arr = arr.astype(np_dtype(dtype))
        arr = np.array(arr, order="C", copy=True)  # keeps rank 0 (ascontiguousarray makes it 1-D)
        name = self._name(name, self.g.values)
        self.g.add_value(Value(name, dtype_of(arr), tuple(arr.shape), quant, arr))
        return name

    def node(self, op: str, inputs: Sequence[str], *, name: str | None = None,
             outputs: Sequence[str] | None = None, quant: Quant | Sequence[Quant | None] | None = None,
             origin: Sequence[str] = (), **attrs: Any) -> Any:
        """Append a node; returns its output name (or a list of names for several outputs)."""
        opdef = get_op(op)
        node_name = self._name(name or op.lower(), {n.name for n in self.g.nodes})
        node = Node(op, node_name, list(inputs), [], node_attrs(opdef, attrs, node_name),
                    tuple(origin) or (node_name,))
        ins = [self.g.values[i] if i else None for i in inputs]
        types = opdef.infer(node, ins)
        quants = list(quant) if isinstance(quant, (list, tuple)) else [quant] * len(types)
        out_names = list(outputs) if outputs is not None else [None] * len(types)
        for k, (dtype, shape) in enumerate(types):
            out = self._name(out_names[k] or node_name, self.g.values)
            self.g.add_value(Value(out, dtype, tuple(int(d) for d in shape), quants[k]))
            node.outputs.append(out)
        self.g.nodes.append(node)
        return node.outputs[0] if len(node.outputs) == 1 else list(node.outputs)

    def output(self, *names: str) -> "GraphBuilder":
        self.g.outputs.extend(names)
        return self

    def build(self, verify: bool = True) -> Graph:
        if verify:
            from codegen.ir.verifier import verify_graph

            verify_graph(self.g)
        return self.g
