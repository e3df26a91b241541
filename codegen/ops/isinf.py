"""IsInf: true where x is an infinity of a detected sign (ONNX IsInf: `detect_negative`,
`detect_positive`); float32 in, bool out."""

from __future__ import annotations

import numpy as np

from codegen.ops.registry import register
from codegen.ops.unary import FloatPredicateOp


@register
class IsInf(FloatPredicateOp):
    name = "IsInf"
    attributes = {"detect_negative": True, "detect_positive": True}
    kernels = ("isinf_f32",)

    @classmethod
    def detected_signs(cls, node):
        return bool(node.attrs["detect_negative"]), bool(node.attrs["detect_positive"])

    @classmethod
    def reference(cls, node, args, g):
        x = args[0]
        return [(np.isposinf(x) & bool(node.attrs["detect_positive"]))
                | (np.isneginf(x) & bool(node.attrs["detect_negative"]))]
