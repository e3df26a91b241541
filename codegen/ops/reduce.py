"""Reductions other than Mean over `axes` (ReduceSum, ReduceMax, ReduceMin, ReduceProd): the
shared part. float32.

Same attributes, shapes and loop plan as `mean.Mean` (empty `axes` reduces every axis): each
output combines its inputs one at a time in row-major order of the reduced indices, starting
from the op's identity, in float32, as the C kernel does, so the reference matches the
kernel to the last bit. Each op's template names its start value and combining expression
for the shared loops of `_reduce_f32.c.j2`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import require_dtypes
from codegen.ops.mean import Mean, reduce_plan
from codegen.ops.registry import Op, OpKind


class ReduceOp(Op):
    kind = OpKind.REDUCTION
    attributes = {"axes": (), "keepdims": True}
    arity = (1, 1)
    identity: ClassVar[float]

    @classmethod
    def infer(cls, node, ins):
        return Mean.infer(node, ins)

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        require_dtypes(node, g, ("float32",))
        reduce_plan(node, g.values[node.inputs[0]].shape)

    @classmethod
    def combine(cls, acc: np.ndarray, v: np.ndarray) -> np.ndarray:
        """One step of the reduction, on float32 columns."""
        raise NotImplementedError

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        rows, count = Mean._rows(node, x)
        acc = np.full(rows.shape[0], cls.identity, np.float32)
        with np.errstate(all="ignore"):
            for k in range(count):  # in the order the C kernel combines
                acc = np.asarray(cls.combine(acc, rows[:, k]), np.float32)
        return [acc.reshape(g.values[node.outputs[0]].shape)]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        x, out = node.inputs[0], node.outputs[0]
        kept, reduced = reduce_plan(node, ctx.g.values[x].shape)
        params = {"kept_dims": tuple(s for s, _ in kept), "kept_strides": tuple(st for _, st in kept),
                  "red_dims": tuple(s for s, _ in reduced), "red_strides": tuple(st for _, st in reduced)}
        ctx.request(KernelRequest(cls.kernels[0], node, params, (ctx.tensor(x), ctx.tensor(out)), ("math.h",)))
