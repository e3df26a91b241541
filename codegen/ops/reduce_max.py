"""ReduceMax: the largest element over `axes` (ONNX ReduceMax, TFLite REDUCE_MAX); NaN wins; float32.

An empty reduction gives -inf. The kernel is the shared loops of `_reduce_f32.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.reduce import ReduceOp
from codegen.ops.registry import register


@register
class ReduceMax(ReduceOp):
    name = "ReduceMax"
    kernels = ("reduce_max_f32",)
    identity = -np.inf

    @classmethod
    def combine(cls, acc, v):
        return np.where((v > acc) | np.isnan(v), v, acc)
