"""Mod: remainder of a / b with broadcasting (ONNX Mod); float32 and the integers.

`fmod=1`: C's fmodf / %, the sign of the dividend (kernels fmod_*). `fmod=0`: Python's %, the
sign of the divisor (kernels mod_*: the C remainder, then + b when the signs differ), as
numpy.mod. An integer x % 0 gives 0, as numpy's does.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, SUFFIX, BroadcastBinaryOp, kernel_names
from codegen.ops.registry import register


@register
class Mod(BroadcastBinaryOp):
    name = "Mod"
    attributes = {"fmod": 0}
    dtypes = ("float32", *INTEGERS)
    kernels = kernel_names("fmod", dtypes) + kernel_names("mod", dtypes)
    kernel_stem = "mod"
    headers = ("math.h",)

    @classmethod
    def kernel(cls, node, dtype):
        return f"{'fmod' if node.attrs['fmod'] else 'mod'}_{SUFFIX[dtype]}"

    @classmethod
    def float_expr(cls, node):
        return "fmod" if node.attrs["fmod"] else None  # mod_f32's floor is a helper function, not an expression

    @classmethod
    def fn(cls, node, a, b):
        if a.dtype != np.float32:
            a, b = np.broadcast_arrays(a, b)
            b_safe = np.where(b == 0, 1, b)
            r = np.fmod(a, b_safe) if node.attrs["fmod"] else np.mod(a, b_safe)
            return np.where(b == 0, 0, r).astype(a.dtype)
        return np.fmod(a, b) if node.attrs["fmod"] else np.mod(a, b)
