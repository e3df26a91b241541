"""Constant folding: every node whose inputs are all constants is computed now.

Each such node is run once with its op's numpy reference (the interpreter's own code, so the
folded value is exactly what the node would compute, int8 included: the output keeps its
quantization), and its outputs become constants. Chains fold in one sweep, since nodes are
visited in execution order. Weights computed in the graph (transposed, dequantized, shape
arithmetic, arithmetic on initializers) end up as plain flash arrays.

A node that computes a graph output is kept (an output must be computed into the caller's
buffer); so are nodes whose reference is not written yet or fails — they stay as kernels.

Needs: a verified graph. Keeps: graph inputs and outputs, the values of every output.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph
from codegen.ir.types import np_dtype
from codegen.ops.registry import get_op
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import clone


def fold_constants(g: Graph) -> Graph:
    g = clone(g)
    kept = []
    for node in g.nodes:
        ins = [i for i in node.inputs if i]
        foldable = bool(ins) and all(g.values[i].is_const for i in ins) and \
            not any(o in g.outputs for o in node.outputs)
        results = _evaluate(node, g) if foldable else None
        if results is None:
            kept.append(node)
            continue
        for out, arr in zip(node.outputs, results):
            g.values[out] = dataclasses.replace(g.values[out], data=arr)
    g.nodes = kept
    return eliminate_dead_code(g)


def _evaluate(node, g: Graph) -> list[np.ndarray] | None:
    """The node's outputs as arrays of their declared types, or None if it cannot run now."""
    args = [g.values[i].data if i else None for i in node.inputs]
    try:
        results = get_op(node.op).reference(node, args, g)
    except (NotImplementedError, KilnError):
        return None
    arrays = []
    for out, arr in zip(node.outputs, results):
        v = g.values[out]
        arr = np.asarray(arr)
        if arr.shape != v.shape or arr.dtype != np_dtype(v.dtype):
            return None  # a reference that disagrees with inference: leave it to the kernel
        arrays.append(np.array(arr, order="C", copy=True))
    return arrays
