"""Div: a / b with broadcasting (ONNX Div, TFLite DIV); float32, IEEE division (x / 0 is ±inf),
and the integers, truncating toward zero as ONNX does (x / 0 gives 0, MIN / -1 wraps).

ONNX Div by a constant becomes a Mul by its reciprocal in the frontend only when that is
exact (a power of two); any other divisor runs this kernel, so results round as ONNX's do.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BroadcastBinaryOp, kernel_names
from codegen.ops.registry import register


def int_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero, 0 for a zero divisor, wrapping MIN / -1."""
    a, b = np.broadcast_arrays(a, b)
    safe = np.where(b == 0, 1, b)
    q = np.floor_divide(a, safe)
    q = q + ((np.remainder(a, safe) != 0) & ((a < 0) ^ (safe < 0))).astype(q.dtype)
    return np.where(b == 0, 0, q).astype(a.dtype)


@register
class Div(BroadcastBinaryOp):
    name = "Div"
    dtypes = ("float32", *INTEGERS)
    kernels = kernel_names("div", dtypes)
    kernel_stem = "div"

    @classmethod
    def fn(cls, node, a, b):
        return np.divide(a, b) if a.dtype == np.float32 else int_divide(a, b)
