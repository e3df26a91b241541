"""Greater: a > b elementwise with broadcasting (ONNX Greater, TFLite GREATER); bool result.

Input dtypes: float32, int8, uint8, int16, int32, int64.
The kernels are the shared loop of `_broadcast2.c.j2` with this op's C expression.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BoolResultOp
from codegen.ops.registry import register


@register
class Greater(BoolResultOp):
    name = "Greater"
    kernels = ("greater_f32", "greater_i8", "greater_u8", "greater_i16", "greater_i32", "greater_i64")
    kernel_stem = "greater"
    dtypes = ("float32", "int8", "uint8", "int16", "int32", "int64")
    numpy_fn = staticmethod(np.greater)
