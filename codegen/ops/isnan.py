"""IsNaN: true where x is NaN (ONNX IsNaN); float32 in, bool out."""

from __future__ import annotations

import numpy as np

from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register


@register
class IsNaN(Op):
    name = "IsNaN"
    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    kernels = ("isnan_f32",)

    @classmethod
    def infer(cls, node, ins):
        return [("bool", ins[0].shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        return [np.isnan(args[0])]

    @classmethod
    def lower(cls, node, ctx):
        x, out = node.inputs[0], node.outputs[0]
        ctx.call(node, "isnan_f32", {"n": ctx.g.values[x].size, "negative": True, "positive": True},
                 [ctx.tensor(x), ctx.tensor(out)])
