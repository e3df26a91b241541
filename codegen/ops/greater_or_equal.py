"""GreaterOrEqual: a >= b elementwise with broadcasting (ONNX GreaterOrEqual, TFLite GREATER_EQUAL); bool result.

Input dtypes: float32 and the integers.
The kernels are the `broadcast2` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BoolResultOp, kernel_names
from codegen.ops.registry import register


@register
class GreaterOrEqual(BoolResultOp):
    name = "GreaterOrEqual"
    kernel_stem = "greater_equal"
    dtypes = ("float32", *INTEGERS)
    kernels = kernel_names("greater_equal", dtypes)
    numpy_fn = staticmethod(np.greater_equal)
