"""LessOrEqual: a <= b elementwise with broadcasting (ONNX LessOrEqual, TFLite LESS_EQUAL); bool result.

Input dtypes: float32 and the integers.
The kernels are the `broadcast2` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BoolResultOp, kernel_names
from codegen.ops.registry import register


@register
class LessOrEqual(BoolResultOp):
    name = "LessOrEqual"
    kernel_stem = "less_equal"
    dtypes = ("float32", *INTEGERS)
    kernels = kernel_names("less_equal", dtypes)
    numpy_fn = staticmethod(np.less_equal)
