"""ReduceProd: the product over `axes` (ONNX ReduceProd; not imported from TFLite); float32.

An empty reduction gives 1.0. The kernel is the shared loops of `_reduce_f32.c.j2`.
"""

from __future__ import annotations

from codegen.ops.reduce import ReduceOp
from codegen.ops.registry import register


@register
class ReduceProd(ReduceOp):
    name = "ReduceProd"
    kernels = ("reduce_prod_f32",)
    identity = 1.0

    @classmethod
    def combine(cls, acc, v):
        return acc * v
