"""Mul: elementwise product with broadcasting (ONNX Mul, TFLite MUL).

int8 is TFLM's reference MulElementwise: (a - zp_a) * (b - zp_b) rescaled once by
s_a * s_b / s_out, plus the output zero point, clamped to the fused activation.
"""

import numpy as np

from codegen.ir.types import INTEGER_DTYPES
from codegen.ops.binary import BinaryOp
from codegen.ops.broadcast_binary import kernel_names
from codegen.ops.registry import register
from codegen.quant import mul_int8, mul_params


@register
class Mul(BinaryOp):
    name = "Mul"
    kernels = ("mul_f32", "mul_bcast_s8", "mul_bcast_s16", *kernel_names("mul", INTEGER_DTYPES))
    numpy_fn = staticmethod(np.multiply)
    kernel_stem = "mul"

    @classmethod
    def quant_params(cls, node, scales, zps, dtype="int8"):
        return mul_params(scales[0], zps[0], scales[1], zps[1], scales[2], zps[2],
                          node.attrs["activation"], dtype)

    int8_fn = staticmethod(mul_int8)

    @staticmethod
    def c_params(p):
        """codegen.quant.MulParams as the fields of kiln_quant.h's kiln_mul_params."""
        return {"input1_offset": p.input1_offset, "input2_offset": p.input2_offset,
                "output_offset": p.output_offset, "output_multiplier": p.output_multiplier,
                "output_shift": p.output_shift,
                "act_min": p.activation_min, "act_max": p.activation_max}
