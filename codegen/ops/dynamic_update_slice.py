"""DynamicUpdateSlice: the operand with a block replaced by `update`, at a position computed at
run time (TFLite DYNAMIC_UPDATE_SLICE, XLA's op).

Inputs: operand, update (same dtype and rank, no larger on any axis), start indices (int32 or
int64, one per axis). Each start is clamped into [0, dim - update_dim] so the block always
fits, as TFLite does. Data movement only: any dtype, values copied as stored.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

MAX_RANK = 6  # the kernel walks the update's axes with a fixed-size index


@register
class DynamicUpdateSlice(Op):
    name = "DynamicUpdateSlice"
    kind = OpKind.OPAQUE
    arity = (3, 3)
    kernels = ("dynamic_update_slice",)

    @classmethod
    def infer(cls, node, ins):
        operand, update, starts = ins
        if update.dtype != operand.dtype or len(update.shape) != len(operand.shape):
            raise KilnError(f"update {update.type_str()} does not match operand {operand.type_str()}", node=node.name)
        if any(u > o for u, o in zip(update.shape, operand.shape)):
            raise KilnError(f"update {list(update.shape)} is larger than operand {list(operand.shape)}", node=node.name)
        if starts.dtype not in ("int32", "int64") or starts.shape != (len(operand.shape),):
            raise KilnError(f"start indices must be int32 or int64 [{len(operand.shape)}], got {starts.type_str()}",
                            node=node.name)
        if len(operand.shape) > MAX_RANK:
            raise KilnError(f"rank {len(operand.shape)} is more than {MAX_RANK}", node=node.name)
        return [(operand.dtype, operand.shape)]

    @classmethod
    def reference(cls, node, args, g):
        operand, update, starts = args
        out = operand.copy()
        region = tuple(slice(s, s + u) for s, u in zip(clamped_starts(starts, operand.shape, update.shape),
                                                         update.shape))
        out[region] = update
        return [out]

    @classmethod
    def lower(cls, node, ctx):
        operand, update, starts = (ctx.g.values[n] for n in node.inputs)
        pad = MAX_RANK - len(operand.shape)
        ctx.request(KernelRequest("dynamic_update_slice", node, {
            "rank": len(operand.shape), "element_bytes": operand.nbytes // max(operand.size, 1),
            "dims": (1,) * pad + tuple(operand.shape), "update_dims": (1,) * pad + tuple(update.shape),
            "index_int64": starts.dtype == "int64"},
            (*(ctx.tensor(n) for n in node.inputs), ctx.tensor(node.outputs[0]))))


def clamped_starts(starts: np.ndarray, dims, update_dims) -> list[int]:
    return [int(min(max(int(s), 0), d - u)) for s, d, u in zip(np.asarray(starts).reshape(-1), dims, update_dims)]
