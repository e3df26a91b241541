"""BitwiseOr: a | b on two broadcast integer tensors (ONNX BitwiseOr)."""

from __future__ import annotations

import numpy as np

from codegen.ops.bitwise import WIDTHS, BitwiseBinaryOp
from codegen.ops.registry import register


@register
class BitwiseOr(BitwiseBinaryOp):
    name = "BitwiseOr"
    kernel_stem = "bitwise_or"
    kernels = tuple(f"bitwise_or_{w}" for w in WIDTHS)
    numpy_fn = staticmethod(np.bitwise_or)
