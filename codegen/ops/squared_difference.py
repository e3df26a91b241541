"""SquaredDifference: (a - b)**2 elementwise with broadcasting (TFLite SQUARED_DIFFERENCE, the
variance step of a converted layer normalisation).

float32: the difference rounded to float, then squared (TFLite's `diff * diff`). int8 and int16
are TFLM's quantized SquaredDifference: Add's common input scale with 7 bits of headroom (none
for int16, whose zero points TFLM requires to be 0), the difference squared in int32, one
rescale to the output.
"""

import numpy as np

from codegen.errors import KilnError
from codegen.ops.binary import BinaryOp, add_sub_c_params
from codegen.ops.common import require_dtypes
from codegen.ops.registry import register
from codegen.quant.elementwise import squared_difference_int8
from codegen.quant.params import squared_difference_params


def _squared_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = np.subtract(a, b)
    return d * d


@register
class SquaredDifference(BinaryOp):
    name = "SquaredDifference"
    kernels = ("squared_difference_f32", "squared_difference_bcast_s8", "squared_difference_bcast_s16")
    numpy_fn = staticmethod(_squared_difference)
    kernel_stem = "squared_difference"

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32", "int8", "int16"))
        dtype = g.values[node.inputs[0]].dtype
        if dtype != "float32" and not cls.is_quantized(node, g):
            raise KilnError(f"{dtype} SquaredDifference needs quantization parameters", node=node.name)
        if node.attrs["activation"] != "none":
            raise KilnError("SquaredDifference has no fused activation", node=node.name)
        super().check(node, g)

    @classmethod
    def quant_params(cls, node, scales, zps, dtype="int8"):
        return squared_difference_params(scales[0], zps[0], scales[1], zps[1], scales[2], zps[2], dtype)

    int8_fn = staticmethod(squared_difference_int8)
    c_params = staticmethod(add_sub_c_params)
