"""Integer bit operations, the shared part: BitwiseAnd / Or / Xor (broadcast), BitwiseNot,
BitShift (broadcast, per dtype) and BitCast (a view).

And, or, xor and not act on bits alone, so one kernel per element width serves the signed and
the unsigned type of that width (`<stem>_u8` ... `_u64`); the kernels take `void` pointers for
that reason. Every op here accepts the eight integer dtypes.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ir.types import np_dtype
from codegen.lower.context import LowerContext
from codegen.ops.common import broadcast_plan, broadcast_shape
from codegen.ops.registry import Op, OpKind

INTEGERS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
WIDTHS = ("u8", "u16", "u32", "u64")


def width_suffix(dtype: str) -> str:
    """The kernel suffix of the element width of `dtype` (u8, u16, u32, u64)."""
    return f"u{np_dtype(dtype).itemsize * 8}"


def check_integer(node: Node, g: Graph) -> str:
    dtype = g.values[node.inputs[0]].dtype
    if dtype not in INTEGERS:
        raise KilnError(f"{node.op} on {dtype} is not supported (supported: {', '.join(INTEGERS)})",
                        node=node.name)
    return dtype


class BitwiseBinaryOp(Op):
    """Two broadcast integer tensors of one dtype, combined bit by bit."""

    kind = OpKind.BROADCAST
    arity = (2, 2)
    kernel_stem: ClassVar[str]
    numpy_fn: ClassVar = None

    @classmethod
    def infer(cls, node, ins):
        a, b = ins
        if a.dtype != b.dtype:
            raise KilnError(f"{node.op} of {a.dtype} and {b.dtype}", node=node.name)
        return [(a.dtype, broadcast_shape(node, a.shape, b.shape))]

    @classmethod
    def check(cls, node, g):
        check_integer(node, g)

    @classmethod
    def reference(cls, node, args, g):
        out = g.values[node.outputs[0]]
        return [np.ascontiguousarray(np.broadcast_to(cls.numpy_fn(*args), out.shape).astype(out.dtype))]

    @classmethod
    def kernel(cls, node: Node, dtype: str) -> str:
        return f"{cls.kernel_stem}_{width_suffix(dtype)}"

    @classmethod
    def params(cls, node: Node, g: Graph) -> dict:
        return {}

    @classmethod
    def lower(cls, node, ctx: LowerContext):
        g = ctx.g
        a, b = node.inputs
        dims, (sa, sb) = broadcast_plan(node, g.values[node.outputs[0]].shape, g.values[a].shape,
                                        g.values[b].shape)
        ctx.call(node, cls.kernel(node, g.values[a].dtype),
                 {"dims": dims, "a_strides": sa, "b_strides": sb, **cls.params(node, g)},
                 [ctx.tensor(a), ctx.tensor(b), ctx.tensor(node.outputs[0])])
