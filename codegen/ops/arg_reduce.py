"""ArgMax / ArgMin along one axis: the shared part. float32 in, int64 indices out.

The first index of the extreme value wins, or the last with `select_last_index`. The tensor
is walked as [outer, depth, inner] around the axis, as Softmax does.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind
from codegen.ops.softmax import normalized_axis, row_geometry


class ArgReduceOp(Op):
    kind = OpKind.REDUCTION
    attributes = {"axis": 0, "keepdims": True, "select_last_index": False}
    arity = (1, 1)
    kernels = ("arg_reduce_f32",)
    is_max: ClassVar[bool]

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        axis = normalized_axis(node, max(len(x.shape), 1))
        if node.attrs["keepdims"]:
            shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return [("int64", shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        axis = normalized_axis(node, x.ndim)
        pick = np.argmax if cls.is_max else np.argmin
        if node.attrs["select_last_index"]:
            idx = x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis)
        else:
            idx = pick(x, axis=axis)
        return [np.asarray(idx, np.int64).reshape(g.values[node.outputs[0]].shape)]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        x, out = node.inputs[0], node.outputs[0]
        geo = row_geometry(node, ctx.g.values[x].shape)
        ctx.request(KernelRequest("arg_reduce_f32", node, {**geo, "is_max": cls.is_max,
                                                           "last": bool(node.attrs["select_last_index"])},
                                  (ctx.tensor(x), ctx.tensor(out))))
