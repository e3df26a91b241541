"""Elementwise ops with a bool result on two broadcast tensors: comparisons (Equal, Less,
Greater, LessOrEqual, GreaterOrEqual) and logic (And, Or, Xor).

bool tensors hold one byte per element, 0 or 1 (uint8_t in C). Each op's template is one
line naming its C expression of `a[i3 * sa]` and `b[i3 * sb]` for the shared loop of
`_broadcast_bool.c.j2`, one kernel per input dtype: `<stem>_f32`, `_i32`, `_i64`, `_b8`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.lower.context import LowerContext
from codegen.ops.common import broadcast_plan, broadcast_shape
from codegen.ops.registry import Op, OpKind

SUFFIX = {"float32": "f32", "int32": "i32", "int64": "i64", "bool": "b8"}


class BoolResultOp(Op):
    kind = OpKind.BROADCAST
    arity = (2, 2)
    attributes: ClassVar[dict] = {}
    dtypes: ClassVar[tuple[str, ...]] = ("float32", "int32", "int64")
    kernel_stem: ClassVar[str]
    numpy_fn: ClassVar = None

    @classmethod
    def infer(cls, node, ins):
        a, b = ins
        if a.dtype != b.dtype:
            raise KilnError(f"{node.op} of {a.dtype} and {b.dtype}", node=node.name)
        return [("bool", broadcast_shape(node, a.shape, b.shape))]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        dtype = g.values[node.inputs[0]].dtype
        if dtype not in cls.dtypes:
            raise KilnError(f"{node.op} on {dtype} is not supported (supported: {', '.join(cls.dtypes)})",
                            node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        a, b = args
        out = np.broadcast_to(cls.numpy_fn(a, b), g.values[node.outputs[0]].shape)
        return [np.ascontiguousarray(out, dtype=np.bool_)]

    @classmethod
    def lower(cls, node, ctx: LowerContext):
        g = ctx.g
        a, b = node.inputs
        dims, (sa, sb) = broadcast_plan(node, g.values[node.outputs[0]].shape, g.values[a].shape,
                                        g.values[b].shape)
        ctx.call(node, f"{cls.kernel_stem}_{SUFFIX[g.values[a].dtype]}",
                 {"dims": dims, "a_strides": sa, "b_strides": sb},
                 [ctx.tensor(a), ctx.tensor(b), ctx.tensor(node.outputs[0])])
