"""Or: logical or of two bool tensors with broadcasting (ONNX Or, TFLite LOGICAL_OR); bool result.

Input dtypes: bool.
The kernels are the `broadcast2` family with this op's macro of `_elementwise_exprs.c.j2`.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.broadcast_binary import BoolResultOp
from codegen.ops.registry import register


@register
class Or(BoolResultOp):
    name = "Or"
    kernels = ("or_b8",)
    kernel_stem = "or"
    dtypes = ("bool",)
    numpy_fn = staticmethod(np.logical_or)
