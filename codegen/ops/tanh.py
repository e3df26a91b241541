"""Tanh (ONNX Tanh, TFLite TANH).

float32: tanhf with math.h.
int8: TFLM's reference_integer_ops::Tanh (gemmlowp fixed-point tanh on the input rescaled
to Q4.27), tabulated over the 256 inputs. TFLM's kernel writes a fixed format, so the output
must be quantized with scale 1/128 and zero point 0.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.registry import register
from codegen.ops.sigmoid import int16_rescale, require_output_quant
from codegen.ops.unary import UnaryOp, per_tensor_quants
from codegen.quant import logistic_tanh_params, tanh_int8
from codegen.quant.sigmoid16 import tanh_int16


@register
class Tanh(UnaryOp):
    name = "Tanh"
    kernels = ("tanh_f32", "unary_lut_s8", "tanh_s16")
    float_kernel = "tanh_f32"
    float_headers = ("math.h",)
    int16_kernel = "tanh_s16"

    @classmethod
    def int16_lowering(cls, node, g):
        """TFLM's 16-bit Tanh: as int16 LOGISTIC, its power-of-two path also for left shift 1."""
        fields = int16_rescale(node, g, (0, 1))
        return (lambda x: tanh_int16(x, fields["multiplier"], fields["right_shift"])), fields

    @classmethod
    def int8_fn(cls, node, g):
        qi, qo = per_tensor_quants(node, g)
        require_output_quant(node, qo, 1.0 / 128, 0)
        params = logistic_tanh_params(qi.s, qi.zp)
        return lambda x: tanh_int8(x, params)

    @classmethod
    def reference_float(cls, node, x):
        return np.tanh(x)
