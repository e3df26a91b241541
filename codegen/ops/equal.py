"""Equal: a == b elementwise with broadcasting (ONNX Equal, TFLite EQUAL); bool result.

Input dtypes: float32, int8, uint8, int16, int32, int64, bool.
The kernels are the shared loop of `_broadcast2.c.j2` with this op's C expression.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BoolResultOp
from codegen.ops.registry import register


@register
class Equal(BoolResultOp):
    name = "Equal"
    kernels = ("equal_f32", "equal_i8", "equal_u8", "equal_i16", "equal_i32", "equal_i64", "equal_b8")
    kernel_stem = "equal"
    dtypes = ("float32", "int8", "uint8", "int16", "int32", "int64", "bool")
    numpy_fn = staticmethod(np.equal)
