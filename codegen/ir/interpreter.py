"""The numpy reference interpreter: runs any graph Kiln can compile, one op reference at a time."""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph
from codegen.ir.types import np_dtype
from codegen.ops.bounded import fits_bound
from codegen.ops.registry import get_op


def run_graph(g: Graph, feeds: dict[str, np.ndarray], keep_all: bool = False) -> dict[str, np.ndarray]:
    """Outputs of `g` for the given inputs (all values when `keep_all`)."""
    env: dict[str, np.ndarray] = {v.name: v.data for v in g.constants()}
    for name in g.inputs:
        if name not in feeds:
            raise KilnError("no data given for graph input", node=name)
        v = g.values[name]
        arr = np.asarray(feeds[name])
        if tuple(arr.shape) != v.shape:
            arr = arr.reshape(v.shape)
        env[name] = arr.astype(np_dtype(v.dtype), copy=False)
    for node in g.nodes:
        args = [env[i] if i else None for i in node.inputs]
        results = get_op(node.op).reference(node, args, g)
        for out, arr in zip(node.outputs, results):
            v = g.values[out]
            arr = np.asarray(arr)
            # a data-dependent length (codegen/ops/bounded.py): any extent up to the bound
            if (arr.shape != v.shape and not fits_bound(g, out, arr.shape)) or arr.dtype != np_dtype(v.dtype):
                raise AssertionError(f"{node.name}: reference gave {arr.dtype}{arr.shape}, "
                                     f"expected {v.type_str()}")
            env[out] = arr
    return env if keep_all else {name: env[name] for name in g.outputs}
