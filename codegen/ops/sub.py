"""Sub: elementwise difference a - b with broadcasting (ONNX Sub, TFLite SUB).

int8 is TFLM's reference SubElementwise: Add's arithmetic with the second term subtracted,
but its rescale factors are computed in float32 (TFLM's CalculateOpDataSub), not double.
"""

import numpy as np

from codegen.ir.types import INTEGER_DTYPES
from codegen.ops.binary import BinaryOp, add_sub_c_params
from codegen.ops.broadcast_binary import kernel_names
from codegen.ops.registry import register
from codegen.quant import add_sub_params, sub_int8


@register
class Sub(BinaryOp):
    name = "Sub"
    kernels = ("sub_f32", "sub_bcast_s8", "sub_bcast_s16", *kernel_names("sub", INTEGER_DTYPES))
    numpy_fn = staticmethod(np.subtract)
    kernel_stem = "sub"

    @classmethod
    def quant_params(cls, node, scales, zps, dtype="int8"):
        return add_sub_params("sub", scales[0], zps[0], scales[1], zps[1], scales[2], zps[2],
                              node.attrs["activation"], dtype)

    int8_fn = staticmethod(sub_int8)
    c_params = staticmethod(add_sub_c_params)
