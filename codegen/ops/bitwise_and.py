"""BitwiseAnd: a & b on two broadcast integer tensors (ONNX BitwiseAnd)."""

from __future__ import annotations

import numpy as np

from codegen.ops.bitwise import WIDTHS, BitwiseBinaryOp
from codegen.ops.registry import register


@register
class BitwiseAnd(BitwiseBinaryOp):
    name = "BitwiseAnd"
    kernel_stem = "bitwise_and"
    kernels = tuple(f"bitwise_and_{w}" for w in WIDTHS)
    numpy_fn = staticmethod(np.bitwise_and)
