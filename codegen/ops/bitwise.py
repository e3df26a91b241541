"""Integer bit operations, the shared part of BitwiseAnd / Or / Xor, BitwiseNot and BitShift.

And, or, xor and not act on bits alone, so one kernel per element width serves the signed and
the unsigned type of that width (`<stem>_u8` ... `_u64`); the kernels take `void` pointers for
that reason. Every op here accepts the eight integer dtypes.
"""

from __future__ import annotations

from codegen.ir.graph import Node
from codegen.ir.types import INTEGER_DTYPES, np_dtype
from codegen.ops.broadcast_binary import BroadcastBinaryOp

INTEGERS = INTEGER_DTYPES
WIDTHS = ("u8", "u16", "u32", "u64")


def width_suffix(dtype: str) -> str:
    """The kernel suffix of the element width of `dtype` (u8, u16, u32, u64)."""
    return f"u{np_dtype(dtype).itemsize * 8}"


class BitwiseBinaryOp(BroadcastBinaryOp):
    """Two broadcast integer tensors of one dtype, combined bit by bit: the loop, checks and
    reference of BroadcastBinaryOp, one kernel per element width."""

    dtypes = INTEGERS

    @classmethod
    def kernel(cls, node: Node, dtype: str) -> str:
        return f"{cls.kernel_stem}_{width_suffix(dtype)}"
