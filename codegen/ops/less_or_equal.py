"""LessOrEqual: a <= b elementwise with broadcasting (ONNX LessOrEqual, TFLite LESS_EQUAL); bool result.

Input dtypes: float32, int8, uint8, int16, int32, int64.
The kernels are the shared loop of `_broadcast2.c.j2` with this op's C expression.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BoolResultOp
from codegen.ops.registry import register


@register
class LessOrEqual(BoolResultOp):
    name = "LessOrEqual"
    kernels = ("less_equal_f32", "less_equal_i8", "less_equal_u8", "less_equal_i16", "less_equal_i32", "less_equal_i64")
    kernel_stem = "less_equal"
    dtypes = ("float32", "int8", "uint8", "int16", "int32", "int64")
    numpy_fn = staticmethod(np.less_equal)
