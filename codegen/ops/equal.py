"""Equal: a == b elementwise with broadcasting (ONNX Equal, TFLite EQUAL); bool result.

Input dtypes: float32 and the integers, bool.
The kernels are the `broadcast2` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import INTEGERS, BoolResultOp, kernel_names
from codegen.ops.registry import register


@register
class Equal(BoolResultOp):
    name = "Equal"
    kernel_stem = "equal"
    dtypes = ("float32", *INTEGERS, "bool")
    kernels = kernel_names("equal", dtypes)
    numpy_fn = staticmethod(np.equal)
