"""IsInf: true where x is an infinity of a detected sign (ONNX IsInf: `detect_negative`,
`detect_positive`); float32 in, bool out."""

from __future__ import annotations

import numpy as np

from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register


@register
class IsInf(Op):
    name = "IsInf"
    kind = OpKind.ELEMENTWISE
    attributes = {"detect_negative": True, "detect_positive": True}
    arity = (1, 1)
    kernels = ("isinf_f32",)

    @classmethod
    def infer(cls, node, ins):
        return [("bool", ins[0].shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        x = args[0]
        return [(np.isposinf(x) & bool(node.attrs["detect_positive"]))
                | (np.isneginf(x) & bool(node.attrs["detect_negative"]))]

    @classmethod
    def lower(cls, node, ctx):
        x, out = node.inputs[0], node.outputs[0]
        ctx.call(node, "isinf_f32", {"n": ctx.g.values[x].size, "negative": bool(node.attrs["detect_negative"]),
                                     "positive": bool(node.attrs["detect_positive"])},
                 [ctx.tensor(x), ctx.tensor(out)])
