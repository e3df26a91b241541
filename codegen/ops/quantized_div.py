"""QuantizedDiv: TFLite Micro's int8 DIV, a / b with broadcasting and a fused activation.

Kiln's Div (codegen/ops/div.py) is float and plain-integer division; int8 DIV with
quantization is TFLM's reference_ops DivElementwise instead: the divisor's reciprocal from
GetReciprocal, the dividend shifted by its headroom, one rescale by s_a / (s_b * s_out)
(codegen.quant.elementwise.div_int8). Its constants are Mul's (kiln_mul_params), so the
broadcasting `div_bcast_s8` kernel and fused elementwise chains call kiln_div_s8 with them.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.binary import BinaryOp
from codegen.ops.mul import Mul
from codegen.ops.registry import register
from codegen.quant.elementwise import div_int8
from codegen.quant.params import div_params


def _unquantized(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    raise KilnError("QuantizedDiv computes only quantized int8 values")


@register
class QuantizedDiv(BinaryOp):
    name = "QuantizedDiv"
    kernels = ("div_bcast_s8",)
    numpy_fn = staticmethod(_unquantized)
    kernel_stem = "div"

    @classmethod
    def check(cls, node, g):
        if g.values[node.inputs[0]].dtype != "int8" or not cls.is_quantized(node, g):
            raise KilnError("QuantizedDiv needs int8 inputs and output with quantization parameters",
                            node=node.name)
        super().check(node, g)

    @classmethod
    def quant_params(cls, node, scales, zps, dtype="int8"):
        return div_params(scales[0], zps[0], scales[1], zps[1], scales[2], zps[2], node.attrs["activation"])

    int8_fn = staticmethod(div_int8)
    c_params = staticmethod(Mul.c_params)
