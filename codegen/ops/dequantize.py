"""Dequantize: int8 -> float32, scale * (x - zero_point) (TFLite DEQUANTIZE, ONNX
DequantizeLinear), as TFLM's reference Dequantize computes it (kiln_dequantize_s8)."""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import quant_of, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.quant import dequantize_int8


@register
class Dequantize(Op):
    name = "Dequantize"
    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    kernels = ("dequantize_s8_f32",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if x.dtype != "int8":
            raise KilnError(f"Dequantize of {x.dtype} (int8 only)", node=node.name)
        return [("float32", x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8",))
        if quant_of(g, node.inputs[0], node).per_channel:
            raise KilnError("per-channel Dequantize is not supported", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        qi = quant_of(g, node.inputs[0], node)
        return [dequantize_int8(args[0], qi.s, qi.zp)]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        x, out = node.inputs[0], node.outputs[0]
        qi = quant_of(ctx.g, x, node)
        ctx.request(KernelRequest("dequantize_s8_f32", node, {"n": ctx.g.values[x].size,
                                                              "scale": float(np.float32(qi.s)), "zero_point": qi.zp},
                                  (ctx.tensor(x), ctx.tensor(out)), ("kiln_quant.h",)))
