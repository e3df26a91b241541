"""Sigmoid: 1 / (1 + exp(-x)) (ONNX Sigmoid, TFLite LOGISTIC).

float32: 1 / (1 + expf(-x)) with math.h.
int8: TFLM's reference_integer_ops::Logistic (gemmlowp fixed-point logistic on the input
rescaled to Q4.27), tabulated over the 256 inputs. TFLM's kernel writes a fixed format, so
the output must be quantized with scale 1/256 and zero point -128.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import register
from codegen.ops.unary import UnaryOp, per_tensor_quants
from codegen.quant import logistic_int8, logistic_tanh_params


def require_output_quant(node, qo, scale: float, zero_point: int) -> None:
    """TFLM's int8 Logistic/Tanh output format is fixed: refuse any other."""
    if qo.zp != zero_point or np.float32(qo.s) != np.float32(scale):
        raise KilnError(f"int8 {node.op} output must be quantized with scale {scale!r} and zero "
                        f"point {zero_point} (TFLM's fixed format), not {qo.s!r}, {qo.zp}",
                        node=node.name)


@register
class Sigmoid(UnaryOp):
    name = "Sigmoid"
    kernels = ("sigmoid_f32", "unary_lut_s8")
    float_kernel = "sigmoid_f32"
    float_headers = ("math.h",)

    @classmethod
    def int8_fn(cls, node, g):
        qi, qo = per_tensor_quants(node, g)
        require_output_quant(node, qo, 1.0 / 256, -128)
        params = logistic_tanh_params(qi.s, qi.zp)
        return lambda x: logistic_int8(x, params)

    @classmethod
    def reference_float(cls, node, x):
        with np.errstate(over="ignore"):
            return np.float32(1) / (np.float32(1) + np.exp(-x))
