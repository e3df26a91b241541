"""Quantize: float32 -> int8, or int8 -> int8 with a new scale / zero point (TFLite QUANTIZE,
ONNX QuantizeLinear). The output quantization is the output value's `Quant`.

float32 -> int8: TFLM AffineQuantize, roundf(x / scale) + zero_point saturated, the division
in float32 (kiln_quantize_f32_s8).
int8 -> int8: TFLM Requantize with QuantizeMultiplier(double(s_in) / double(s_out)), as a
256-entry table.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import quant_of, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.unary import lower_lut, per_tensor_quants
from codegen.quant import quantize_float_to_int8, requantize_int8, requantize_params


def _requantize_fn(node: Node, g: Graph):
    qi, qo = per_tensor_quants(node, g)
    multiplier, shift = requantize_params(qi.s, qo.s)
    return lambda x: requantize_int8(x, multiplier, shift, qi.zp, qo.zp)


@register
class Quantize(Op):
    name = "Quantize"
    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    kernels = ("quantize_f32", "unary_lut_s8")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if x.dtype not in ("float32", "int8"):
            raise KilnError(f"Quantize of {x.dtype} (float32 or int8 only)", node=node.name)
        return [("int8", x.shape)]

    @classmethod
    def check(cls, node, g):
        if require_dtypes(node, g, ("float32", "int8")) == "int8":
            _requantize_fn(node, g)
        elif quant_of(g, node.outputs[0], node).per_channel:
            raise KilnError("per-channel Quantize is not supported", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        if x.dtype == np.int8:
            return [_requantize_fn(node, g)(x)]
        qo = quant_of(g, node.outputs[0], node)
        return [quantize_float_to_int8(x, qo.s, qo.zp)]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        x, out = node.inputs[0], node.outputs[0]
        if ctx.g.values[x].dtype == "int8":
            lower_lut(node, ctx, _requantize_fn(node, ctx.g))
            return
        qo = quant_of(ctx.g, out, node)
        ctx.request(KernelRequest("quantize_f32", node, {"n": ctx.g.values[x].size, "scale": float(np.float32(qo.s)),
                                                         "zero_point": qo.zp},
                                  (ctx.tensor(x), ctx.tensor(out)), ("kiln_quant.h",)))
