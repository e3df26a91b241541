"""GreaterOrEqual: a >= b elementwise with broadcasting (ONNX GreaterOrEqual, TFLite GREATER_EQUAL); bool result.

Input dtypes: float32, int8, uint8, int16, int32, int64.
The kernels are the shared loop of `_broadcast2.c.j2` with this op's C expression.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BoolResultOp
from codegen.ops.registry import register


@register
class GreaterOrEqual(BoolResultOp):
    name = "GreaterOrEqual"
    kernels = ("greater_equal_f32", "greater_equal_i8", "greater_equal_u8", "greater_equal_i16", "greater_equal_i32", "greater_equal_i64")
    kernel_stem = "greater_equal"
    dtypes = ("float32", "int8", "uint8", "int16", "int32", "int64")
    numpy_fn = staticmethod(np.greater_equal)
