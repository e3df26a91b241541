"""GatherElements: out[i..] = data[i.. with `axis` replaced by indices[i..]] (ONNX
GatherElements, PyTorch gather) with indices computed at run time (int32 or int64).

indices has data's rank; its other dimensions may be smaller than data's. A negative index
counts from the end once, then indices are clamped into the axis so that none reads outside
the data. Any data dtype. The part of each output element's data offset that does not
depend on the index is a compile-time table (one int32 per output element). The frontend
lowers constant indices to Take instead.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.ops.softmax import normalized_axis


@register
class GatherElements(Op):
    name = "GatherElements"
    kind = OpKind.INJECTIVE
    attributes = {"axis": 0}
    arity = (2, 2)
    kernels = ("gather_elements",)

    @classmethod
    def infer(cls, node, ins):
        data, idx = ins
        if idx.dtype not in ("int32", "int64"):
            raise KilnError(f"GatherElements indices are {idx.dtype}, not int32 or int64", node=node.name)
        axis = normalized_axis(node, len(data.shape))
        if len(idx.shape) != len(data.shape) or any(i > d for k, (i, d) in enumerate(zip(idx.shape, data.shape))
                                                      if k != axis):
            raise KilnError(f"GatherElements indices {list(idx.shape)} do not fit data {list(data.shape)}",
                            node=node.name)
        return [(data.dtype, tuple(idx.shape))]

    @classmethod
    def reference(cls, node, args, g):
        data, idx = args
        axis = normalized_axis(node, data.ndim)
        dim = data.shape[axis]
        i = np.asarray(idx, np.int64)
        i = np.clip(np.where(i < 0, i + dim, i), 0, dim - 1)
        sub = data[tuple(slice(0, s) if k != axis else slice(None) for k, s in enumerate(idx.shape))]
        return [np.ascontiguousarray(np.take_along_axis(sub, i, axis=axis))]

    @classmethod
    def lower(cls, node, ctx):
        data, idx = node.inputs
        dv, iv = ctx.g.values[data], ctx.g.values[idx]
        axis = normalized_axis(node, len(dv.shape))
        elem = np_dtype(dv.dtype).itemsize
        strides = [int(np.prod(dv.shape[k + 1:], dtype=np.int64)) * elem for k in range(len(dv.shape))]
        grids = np.meshgrid(*[np.arange(s) for s in iv.shape], indexing="ij")
        base = sum(gr * st for k, (gr, st) in enumerate(zip(grids, strides)) if k != axis)
        base = np.asarray(base, np.int64).reshape(-1) if iv.shape else np.zeros(1, np.int64)
        ctx.request(KernelRequest("gather_elements", node, {
            "n": iv.size, "dim": dv.shape[axis], "axis_stride": strides[axis], "elem": elem,
            "wide_indices": iv.dtype == "int64", "base": ctx.constant(node, "base", base, "int32")}))
