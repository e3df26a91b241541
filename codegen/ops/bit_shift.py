"""BitShift: x shifted by y bits, both integer tensors of one dtype, broadcast (ONNX BitShift).

direction "LEFT" moves bits toward the high end (the bits shifted out, also past the sign bit of
a signed type, are lost); "RIGHT" toward the low end, arithmetic (sign-filling) for signed types.
A shift amount below 0 or of the type's width or more leaves only the sign fill: -1 for a
right shift of a negative number, 0 otherwise (ONNX opset 28's rule, C's shift being undefined
there).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.bitwise import BitwiseBinaryOp
from codegen.ops.broadcast_binary import SUFFIX
from codegen.ops.common import broadcast_plan
from codegen.ops.registry import register
from codegen.ops.request import KernelRequest

SHIFT_SUFFIX = {**SUFFIX, "uint16": "u16", "uint32": "u32", "uint64": "u64"}


def shift_array(x: np.ndarray, y: np.ndarray, left: bool) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    bits = x.dtype.itemsize * 8
    signed = np.issubdtype(x.dtype, np.signedinteger)
    amount = y.astype(np.int64)  # a uint64 amount of 2**63 or more turns negative: out of range too
    outside = (amount < 0) | (amount >= bits)
    safe = np.where(outside, 0, amount).astype(np.uint64)
    unsigned = x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    if left:
        moved = (unsigned << safe).astype(f"u{x.dtype.itemsize}").view(x.dtype)
    elif signed:
        moved = x >> safe.astype(x.dtype)
    else:
        moved = (unsigned >> safe).astype(x.dtype)
    fill = np.where(x < 0, -1, 0).astype(x.dtype) if signed and not left else np.zeros_like(x)
    return np.where(outside, fill, moved).astype(x.dtype)


@register
class BitShift(BitwiseBinaryOp):
    name = "BitShift"
    attributes = {"direction": "LEFT"}
    kernel_stem = "bit_shift"
    kernels = tuple(f"bit_shift_{s}" for s in ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"))

    @classmethod
    def check(cls, node, g):
        super().check(node, g)
        if node.attrs["direction"] not in ("LEFT", "RIGHT"):
            raise KilnError(f"BitShift direction '{node.attrs['direction']}' is not LEFT or RIGHT", node=node.name)

    @classmethod
    def fn(cls, node, a, b):
        return shift_array(a, b, node.attrs["direction"] == "LEFT")

    @classmethod
    def kernel(cls, node, dtype):
        return f"bit_shift_{SHIFT_SUFFIX[dtype]}"

    @classmethod
    def lower(cls, node, ctx):
        """BroadcastBinaryOp's call with the direction as a parameter."""
        g = ctx.g
        a, b = node.inputs
        dims, (sa, sb) = broadcast_plan(node, g.values[node.outputs[0]].shape, g.values[a].shape, g.values[b].shape)
        ctx.request(KernelRequest(cls.kernel(node, g.values[a].dtype), node,
                                  {"dims": dims, "a_strides": sa, "b_strides": sb,
                                   "left": int(node.attrs["direction"] == "LEFT")}))
