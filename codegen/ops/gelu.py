"""Gelu: x * Phi(x), the Gaussian error linear unit (ONNX Gelu; not imported from TFLite); float32.

`approximate="none"`: 0.5 * x * (1 + erf(x / sqrt(2))) (kernel gelu_f32);
`approximate="tanh"`: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) (gelu_tanh_f32).
Both are the `unary_f32` family, each with its macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.float_unary import FloatUnaryOp, erf
from codegen.ops.registry import register

SQRT_2_OVER_PI = 0.7978845608028654


@register
class Gelu(FloatUnaryOp):
    name = "Gelu"
    kernels = ("gelu_f32", "gelu_tanh_f32")
    attributes = {"approximate": "none"}

    @classmethod
    def _tanh(cls, node) -> bool:
        mode = node.attrs["approximate"]
        if mode not in ("none", "tanh"):
            raise KilnError(f"Gelu approximate='{mode}' is not one of none, tanh", node=node.name)
        return mode == "tanh"

    @classmethod
    def infer(cls, node, ins):
        cls._tanh(node)
        return super().infer(node, ins)

    @classmethod
    def kernel(cls, node):
        return "gelu_tanh_f32" if cls._tanh(node) else "gelu_f32"

    @classmethod
    def fn(cls, node, x):
        x64 = x.astype(np.float64)
        if cls._tanh(node):
            return 0.5 * x64 * (1.0 + np.tanh(SQRT_2_OVER_PI * (x64 + 0.044715 * x64 ** 3)))
        return 0.5 * x64 * (1.0 + erf(x64 / np.sqrt(2.0)))
