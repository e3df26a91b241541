"""QuantizeLinear / DequantizeLinear, for the simple case: per-tensor int8.

The scale and zero point become the `Quant` of the int8 value (Kiln keeps quantization on
values, not on ops). uint8, per-axis and blocked quantization are refused for now.
"""

from __future__ import annotations

import numpy as np
import onnx

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.reader import OnnxNode
from codegen.ir.types import Quant


def _quant(ctx: ConvertContext, node: OnnxNode, int8_known: bool) -> Quant:
    """The per-tensor int8 Quant given by inputs 1 (scale) and 2 (zero point)."""
    scale = ctx.require_const(node, 1, "scale")
    if scale.size != 1:
        raise node.error(f"per-axis quantization ({scale.size} scales) is not supported yet")
    if node.attr("block_size", 0):
        raise node.error("blocked quantization is not supported")
    zp = ctx.const(node.input(2))
    if node.input(2) and zp is None:
        raise node.error("zero point (input 2) must be a constant")
    if zp is not None:
        if zp.dtype != np.int8:
            raise node.error(f"{zp.dtype} quantization is not supported yet (only int8)")
        zero = int(zp.reshape(-1)[0])
    elif int8_known or node.attr("output_dtype", 0) == onnx.TensorProto.INT8:
        zero = 0
    else:
        raise node.error("uint8 quantization (no zero point given) is not supported yet (only int8)")
    s = float(scale.reshape(-1)[0])
    if not s > 0:
        raise node.error(f"scale {s} must be positive")
    return Quant.of(s, zero)


@converter("QuantizeLinear")
def convert_quantize(ctx, node):
    q = _quant(ctx, node, int8_known=False)
    ctx.add(node, "Quantize", [ctx.kiln(node.input(0))], out=node.outputs[0], quant=q)


@converter("DequantizeLinear")
def convert_dequantize(ctx, node):
    x = node.input(0)
    if ctx.dtype(x) != "int8":
        raise node.error(f"input is {ctx.dtype(x)}; only int8 is supported yet")
    q = _quant(ctx, node, int8_known=True)
    value = ctx.b.g.values[ctx.kiln(x)]
    if value.quant is None:
        value.quant = q
    elif value.quant != q:
        raise node.error(f"scale/zero point ({q.s:g}, {q.zp}) differ from those of '{x}' "
                         f"({value.quant.scale[0]:g}, {value.quant.zero_point[0]})")
    ctx.add(node, "Dequantize", [value.name], out=node.outputs[0])
