"""Mod: remainder of a / b with broadcasting (ONNX Mod); float32.

`fmod=1`: C's fmodf, the sign of the dividend (kernel fmod_f32). `fmod=0`: Python's %, the
sign of the divisor (kernel mod_f32: fmodf, then + b when the signs differ), as numpy.mod.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BroadcastBinaryOp
from codegen.ops.registry import register


@register
class Mod(BroadcastBinaryOp):
    name = "Mod"
    attributes = {"fmod": 0}
    kernels = ("fmod_f32", "mod_f32")
    kernel_stem = "mod"
    headers = ("math.h",)

    @classmethod
    def kernel(cls, node, dtype):
        return "fmod_f32" if node.attrs["fmod"] else "mod_f32"

    @classmethod
    def fn(cls, node, a, b):
        return np.fmod(a, b) if node.attrs["fmod"] else np.mod(a, b)
