"""Add: elementwise sum with broadcasting (ONNX Add, TFLite ADD with fused activation)."""

import numpy as np

from codegen.ops.binary import BinaryOp
from codegen.ops.registry import register


@register
class Add(BinaryOp):
    name = "Add"
    kernels = ("add_f32", "add_s8")
    numpy_fn = staticmethod(np.add)
    kernel_stem = "add"
