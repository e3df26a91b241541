"""Greater: a > b elementwise with broadcasting (ONNX Greater, TFLite GREATER); bool result.

Input dtypes: float32 and the integers.
The kernels are the `broadcast2` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BoolResultOp, kernel_names
from codegen.ops.registry import register


@register
class Greater(BoolResultOp):
    name = "Greater"
    kernel_stem = "greater"
    dtypes = ("float32", *INTEGERS)
    kernels = kernel_names("greater", dtypes)
    numpy_fn = staticmethod(np.greater)
