"""PRelu: x, or slope * x below 0, with the slope broadcast to x (ONNX PRelu, TFLite PRELU);
float32. The output has x's shape (ONNX's unidirectional broadcast)."""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.broadcast_binary import BroadcastBinaryOp
from codegen.ops.registry import register


@register
class PRelu(BroadcastBinaryOp):
    name = "PRelu"
    kernels = ("prelu_f32",)
    kernel_stem = "prelu"

    @classmethod
    def infer(cls, node, ins):
        (dtype, shape), = super().infer(node, ins)
        if shape != tuple(ins[0].shape):
            raise KilnError(f"PRelu slope {list(ins[1].shape)} does not broadcast to x "
                            f"{list(ins[0].shape)}", node=node.name)
        return [(dtype, shape)]

    @classmethod
    def fn(cls, node, a, b):
        return np.where(a < 0, a * b, a)
