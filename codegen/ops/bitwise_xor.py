"""BitwiseXor: a ^ b on two broadcast integer tensors (ONNX BitwiseXor)."""

from __future__ import annotations

import numpy as np

from codegen.ops.bitwise import WIDTHS, BitwiseBinaryOp
from codegen.ops.registry import register


@register
class BitwiseXor(BitwiseBinaryOp):
    name = "BitwiseXor"
    kernel_stem = "bitwise_xor"
    kernels = tuple(f"bitwise_xor_{w}" for w in WIDTHS)
    numpy_fn = staticmethod(np.bitwise_xor)
