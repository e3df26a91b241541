"""Sigmoid: 1 / (1 + exp(-x)) (ONNX Sigmoid, TFLite LOGISTIC).

float32: 1 / (1 + expf(-x)) with math.h.
int8: TFLM's reference_integer_ops::Logistic (gemmlowp fixed-point logistic on the input
rescaled to Q4.27), tabulated over the 256 inputs. TFLM's kernel writes a fixed format, so
the output must be quantized with scale 1/256 and zero point -128.
int16: TFLM's 16-bit Logistic (codegen/quant/sigmoid16.py: the input rescaled to the scale of
its sigmoid table, interpolated); zero points 0, output scale 2^-15.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import register
from codegen.ops.unary import UnaryOp, per_tensor_quants
from codegen.quant import logistic_int8, logistic_tanh_params
from codegen.quant.sigmoid16 import SIGMOID_TABLE_UINT16, checked_log2, int16_input_rescale, sigmoid_int16


def require_output_quant(node, qo, scale: float, zero_point: int) -> None:
    """TFLM's int8 Logistic/Tanh output format is fixed: refuse any other."""
    if qo.zp != zero_point or np.float32(qo.s) != np.float32(scale):
        raise KilnError(f"int8 {node.op} output must be quantized with scale {scale!r} and zero "
                        f"point {zero_point} (TFLM's fixed format), not {qo.s!r}, {qo.zp}",
                        node=node.name)


def int16_rescale(node, g, pot_left_shifts: tuple[int, ...]) -> dict:
    """The int16 LOGISTIC / TANH kernel's fields as TFLM's Prepare checks and computes them:
    zero points 0, an output scale of 2^-15, the input rescaled to the table's scale."""
    qi, qo = per_tensor_quants(node, g)
    if qi.zp or qo.zp:
        raise KilnError(f"int16 {node.op} needs zero points of 0 (TFLM's), not {qi.zp} and {qo.zp}", node=node.name)
    exact, log2 = checked_log2(qo.s)
    if not exact or log2 != -15:
        raise KilnError(f"int16 {node.op} output must be quantized with scale 2^-15 (TFLM's fixed format), "
                        f"not {qo.s!r}", node=node.name)
    multiplier, right_shift = int16_input_rescale(qi.s, pot_left_shifts)
    return {"multiplier": multiplier, "right_shift": right_shift, "sigmoid_table": SIGMOID_TABLE_UINT16}


@register
class Sigmoid(UnaryOp):
    name = "Sigmoid"
    kernels = ("sigmoid_f32", "unary_lut_s8", "sigmoid_s16")
    float_kernel = "sigmoid_f32"
    float_headers = ("math.h",)
    int16_kernel = "sigmoid_s16"

    @classmethod
    def int16_lowering(cls, node, g):
        fields = int16_rescale(node, g, (0,))
        return (lambda x: sigmoid_int16(x, fields["multiplier"], fields["right_shift"])), fields

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
