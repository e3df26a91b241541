"""Gather: pick entries of `axis` by an index tensor (ONNX Gather, TFLite GATHER).

out[a.., i.., b..] = data[a.., indices[i..], b..]; the output's shape is data's with `axis`
replaced by the indices' shape. Negative indices count from the end. Any data dtype.
Constant indices (checked at compile time) use the shared `index_map` kernel. Indices
computed at run time (int32 or int64) use `gather_rows`, which wraps negative indices once
and clamps the rest into the axis, so that a bad index cannot read outside the tensor
(ONNX calls out-of-range indices an error).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.index_map import lower_index_map
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.ops.slice import require_nonempty
from codegen.ops.softmax import normalized_axis


def _geometry(node, shape) -> tuple[int, int, int, int]:
    """(axis, outer, axis size, inner) of data around the gathered axis."""
    axis = normalized_axis(node, len(shape))
    return (axis, int(np.prod(shape[:axis], dtype=np.int64)), int(shape[axis]),
            int(np.prod(shape[axis + 1:], dtype=np.int64)))


def wrapped(indices: np.ndarray, dim: int) -> np.ndarray:
    """Negative indices counted from the end, then clamped into [0, dim) (as the kernel does)."""
    idx = np.asarray(indices, np.int64).reshape(-1)
    return np.clip(np.where(idx < 0, idx + dim, idx), 0, dim - 1)


@register
class Gather(Op):
    name = "Gather"
    kind = OpKind.INJECTIVE
    attributes = {"axis": 0}
    arity = (2, 2)
    kernels = ("index_map", "gather_rows", "copy")

    @classmethod
    def infer(cls, node, ins):
        data, idx = ins
        if idx.dtype not in ("int32", "int64"):
            raise KilnError(f"Gather indices are {idx.dtype}, not int32 or int64", node=node.name)
        axis = normalized_axis(node, len(data.shape))
        shape = data.shape[:axis] + tuple(idx.shape) + data.shape[axis + 1:]
        if idx.is_const:
            flat = idx.data.reshape(-1).astype(np.int64)
            dim = data.shape[axis]
            if flat.size and (flat.min() < -dim or flat.max() >= dim):
                raise KilnError(f"Gather index out of range for axis {axis} of size {dim}", node=node.name)
        return [(data.dtype, require_nonempty(node, shape))]

    @classmethod
    def reference(cls, node, args, g):
        data, idx = args
        axis, _, dim, _ = _geometry(node, data.shape)
        out = np.take(data, wrapped(idx, dim), axis=axis)
        return [np.ascontiguousarray(out.reshape(g.values[node.outputs[0]].shape))]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        data, idx = node.inputs
        axis, outer, dim, inner = _geometry(node, g.values[data].shape)
        iv = g.values[idx]
        if iv.is_const:
            picks = [np.arange(outer), wrapped(iv.data, dim), np.arange(inner)]
            lower_index_map(node, ctx, data, node.outputs[0], picks, in_shape=(outer, dim, inner))
            return
        itemsize = np_dtype(g.values[data].dtype).itemsize
        ctx.request(KernelRequest("gather_rows", node, {"outer": outer, "dim": dim, "row_bytes": inner * itemsize,
                                                        "count": iv.size, "wide_indices": iv.dtype == "int64"}))
