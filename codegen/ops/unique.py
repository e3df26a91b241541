"""Unique: the distinct elements of x (or distinct slices along `axis`), ONNX Unique.

Outputs: Y (the distinct values), indices (first occurrence of each in x), inverse_indices
(for each element or slice of x, its entry in Y) and counts, all int64 but Y. `sorted`:
ascending order (slices lexicographically, as numpy.unique); otherwise in order of first
occurrence. Without `axis` x is flattened. The number of distinct entries depends on the
data: Y (along its axis, axis 0 when flattened), indices and counts are bounded by the size
of that axis (codegen/ops/bounded.py); inverse_indices has a static length.

Float NaNs are equal to each other and sort last, -0.0 equals 0.0 (numpy's rules); the
first occurrence represents equal values. The kernel compares every slice with the distinct
ones found so far: O(n^2) in the axis size, for the small tensors of firmware models.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import INTEGER_DTYPES
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.ops.bounded import LengthArg, check_graph_outputs_only
from codegen.ops.broadcast_binary import SUFFIX
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register

DTYPES = ("float32", "bool", *INTEGER_DTYPES)
# one kernel `unique__<dtype>` per C type (template variables name, T, is_float); bool: 0 < 1 as uint8
KERNEL = {d: f"unique__{SUFFIX['uint8' if d == 'bool' else d]}" for d in DTYPES}


def _axis(node, rank: int) -> int | None:
    axis = node.attrs["axis"]
    if axis is None:
        return None
    if not -rank <= int(axis) < rank:
        raise KilnError(f"Unique axis {axis} out of range for rank {rank}", node=node.name)
    return int(axis) % rank


def _geometry(node, shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(outer, depth, inner) around the axis (1, size, 1 when flattened)."""
    axis = _axis(node, len(shape))
    if axis is None:
        return 1, int(np.prod(shape, dtype=np.int64)), 1
    return (int(np.prod(shape[:axis], dtype=np.int64)), shape[axis],
            int(np.prod(shape[axis + 1:], dtype=np.int64)))


@register
class Unique(Op):
    name = "Unique"
    kind = OpKind.OPAQUE
    attributes = {"axis": None, "sorted": True}
    arity = (1, 1)
    kernels = tuple(dict.fromkeys(KERNEL.values()))  # the unique family (codegen/kernels/reference/unique.py)

    @classmethod
    def bounded_outputs(cls, node, g):
        return {0: _axis(node, len(g.values[node.inputs[0]].shape)) or 0, 1: 0, 3: 0}

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        axis = _axis(node, len(x.shape))
        depth = _geometry(node, x.shape)[1]
        if depth == 0:
            raise KilnError("Unique of an empty tensor", node=node.name)
        y_shape = (x.size,) if axis is None else x.shape
        return [(x.dtype, y_shape), ("int64", (depth,)), ("int64", (depth,)), ("int64", (depth,))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, DTYPES)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        axis = _axis(node, x.ndim)
        flat = x.reshape(-1) if axis is None else x
        _, indices, inverse, counts = np.unique(flat, return_index=True, return_inverse=True,
                                                return_counts=True, axis=0 if axis is None else axis)
        if not node.attrs["sorted"]:  # order of first occurrence
            order = np.argsort(indices, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            indices, counts, inverse = indices[order], counts[order], rank[inverse.reshape(-1)]
        y = np.take(flat, indices, axis=0 if axis is None else axis)
        return [y, *(np.asarray(a, np.int64).reshape(-1) for a in (indices, inverse, counts))]

    @classmethod
    def lower(cls, node, ctx):
        check_graph_outputs_only(node, ctx.g)
        x = node.inputs[0]
        outer, depth, inner = _geometry(node, ctx.g.values[x].shape)
        params = {"outer": outer, "depth": depth, "inner": inner, "sorted": bool(node.attrs["sorted"])}
        y, indices, inverse, counts = node.outputs
        dtype = ctx.g.values[x].dtype
        ctx.request(KernelRequest(KERNEL[dtype], node, params,
                                  (ctx.tensor(x), ctx.tensor(y), ctx.tensor(indices), ctx.tensor(inverse),
                                   ctx.tensor(counts), LengthArg(y), LengthArg(indices), LengthArg(counts),
                                   ScratchArg(8 * depth))))
