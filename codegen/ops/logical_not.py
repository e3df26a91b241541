"""Not: logical negation of a bool tensor (ONNX Not, TFLite LOGICAL_NOT)."""

from __future__ import annotations

import numpy as np

from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


@register
class Not(Op):
    name = "Not"
    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    kernels = ("not_b8",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("bool",))

    @classmethod
    def reference(cls, node, args, g):
        return [np.logical_not(args[0])]

    @classmethod
    def lower(cls, node, ctx):
        x, out = node.inputs[0], node.outputs[0]
        ctx.request(KernelRequest("not_b8", node, {"n": ctx.g.values[x].size}, (ctx.tensor(x), ctx.tensor(out))))
