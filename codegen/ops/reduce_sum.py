"""ReduceSum: the sum over `axes` (ONNX ReduceSum, TFLite SUM); float32.

An empty reduction gives 0.0. The kernel is the shared loops of `_reduce_f32.c.j2`.
"""

from __future__ import annotations

from codegen.ops.reduce import ReduceOp
from codegen.ops.registry import register


@register
class ReduceSum(ReduceOp):
    name = "ReduceSum"
    kernels = ("reduce_sum_f32",)
    identity = 0.0

    @classmethod
    def combine(cls, acc, v):
        return acc + v
