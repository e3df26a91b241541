"""IsNaN: true where x is NaN (ONNX IsNaN); float32 in, bool out."""

from __future__ import annotations

import numpy as np

from codegen.ops.registry import register
from codegen.ops.unary import FloatPredicateOp


@register
class IsNaN(FloatPredicateOp):
    name = "IsNaN"
    kernels = ("isnan_f32",)

    @classmethod
    def reference(cls, node, args, g):
        return [np.isnan(args[0])]
