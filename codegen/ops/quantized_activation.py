"""QuantizedActivation: an int8 -> int8 activation given by its float function between the
input's and the output's quantization (onnxruntime's QLinearSigmoid and QLinearLeakyRelu),
tabulated over the 256 inputs: a lookup table at run time.

The table is the float32 function of the dequantized input, quantized as Kiln's Quantize does
(round half away from zero), which is what the op computes in TFLite's numerics; in
onnxruntime's numerics the onnxruntime kernel variant tabulates onnxruntime's own arithmetic
(MLAS's logistic, round half to even: codegen/kernels/onnxruntime/unary_lut_s8.py).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.unary import lower_lut, per_tensor_quants
from codegen.quant import dequantize_int8, quantize_float_to_int8

FUNCTIONS = ("sigmoid", "leaky_relu")


def float_function(node) -> "callable":
    """The node's activation on float32 values."""
    if node.attrs["function"] == "sigmoid":
        return lambda x: (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)
    alpha = np.float32(node.attrs["alpha"])
    return lambda x: np.where(x < 0, alpha * x, x).astype(np.float32)


@register
class QuantizedActivation(Op):
    name = "QuantizedActivation"
    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    attributes = {"function": "sigmoid", "alpha": 0.01}
    kernels = ("unary_lut_s8",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [("int8", x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8",))
        if node.attrs["function"] not in FUNCTIONS:
            raise KilnError(f"QuantizedActivation function '{node.attrs['function']}' is not one of "
                            f"{', '.join(FUNCTIONS)}", node=node.name)
        per_tensor_quants(node, g)

    @classmethod
    def int8_fn(cls, node, g):
        qi, qo = per_tensor_quants(node, g)
        fn = float_function(node)
        with np.errstate(over="ignore"):
            return lambda x: quantize_float_to_int8(fn(dequantize_int8(x, qi.s, qi.zp)), qo.s, qo.zp)

    @classmethod
    def reference(cls, node, args, g):
        with np.errstate(over="ignore"):
            return [np.asarray(cls.int8_fn(node, g)(args[0])).astype(np.int8)]

    @classmethod
    def lower(cls, node, ctx):
        lower_lut(node, ctx, cls.int8_fn(node, ctx.g))
