"""Less: a < b elementwise with broadcasting (ONNX Less, TFLite LESS); bool result.

Input dtypes: float32 and the integers.
The kernels are the `broadcast2` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BoolResultOp, kernel_names
from codegen.ops.registry import register


@register
class Less(BoolResultOp):
    name = "Less"
    kernel_stem = "less"
    dtypes = ("float32", *INTEGERS)
    kernels = kernel_names("less", dtypes)
    numpy_fn = staticmethod(np.less)
