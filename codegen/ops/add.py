"""Add: elementwise sum with broadcasting (ONNX Add, TFLite ADD with fused activation).

int8 is TFLM's reference AddFunc: both inputs rescaled to a common scale with 20 bits of
headroom (per-input multiplier and shift), summed, rescaled to the output, clamped.
"""

import numpy as np

from codegen.ir.types import INTEGER_DTYPES
from codegen.ops.binary import BinaryOp, add_sub_c_params
from codegen.ops.broadcast_binary import kernel_names
from codegen.ops.registry import register
from codegen.quant import add_int8, add_sub_params


@register
class Add(BinaryOp):
    name = "Add"
    kernels = ("add_f32", "add_bcast_s8", "add_bcast_s16", *kernel_names("add", INTEGER_DTYPES))
    numpy_fn = staticmethod(np.add)
    kernel_stem = "add"

    @classmethod
    def quant_params(cls, node, scales, zps, dtype="int8"):
        return add_sub_params("add", scales[0], zps[0], scales[1], zps[1], scales[2], zps[2],
                              node.attrs["activation"], dtype)

    int8_fn = staticmethod(add_int8)
    c_params = staticmethod(add_sub_c_params)
