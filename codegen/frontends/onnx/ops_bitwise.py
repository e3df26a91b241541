"""Integer bit operations: BitwiseAnd / Or / Xor / Not, BitShift and BitCast, one Kiln op each.

BitCast reinterprets the stored bytes: a tensor Kiln computes in a wider dtype than the model
stores (float16, float64, ...) is first cast back to its stored dtype, and a result of such a
dtype is cast to the dtype Kiln computes it in, so that the bits are the model's.
"""

from __future__ import annotations

from codegen.frontends.onnx.context import converter
from codegen.frontends.onnx.reader import ELEM_TYPE_NAMES
from codegen.ir.types import C_TYPES, compute_dtype

@converter("BitwiseAnd", "BitwiseOr", "BitwiseXor")
def convert_bitwise(ctx, node):
    """The Kiln ops carry the ONNX names."""
    ctx.add(node, node.op_type, [ctx.kiln(node.input(0)), ctx.kiln(node.input(1))], out=node.outputs[0])


@converter("BitwiseNot")
def convert_bitwise_not(ctx, node):
    ctx.add(node, "BitwiseNot", [ctx.kiln(node.input(0))], out=node.outputs[0])


@converter("BitShift")
def convert_bit_shift(ctx, node):
    ctx.add(node, "BitShift", [ctx.kiln(node.input(0)), ctx.kiln(node.input(1))], out=node.outputs[0],
            direction=str(node.attr("direction", "")).upper())


@converter("BitCast")
def convert_bit_cast(ctx, node):
    x = node.input(0)
    name = ELEM_TYPE_NAMES.get(int(node.attr("to", 0)), str(node.attr("to")))
    to = {"float": "float32", "double": "float64"}.get(name, name)
    if to not in C_TYPES:
        raise node.error(f"to {name} is not supported (Kiln stores {', '.join(C_TYPES)})")
    stored = ctx.onnx_dtype(x)
    src = ctx.kiln(x)
    if stored != ctx.dtype(x):  # held wider than stored: back to the model's bytes first
        src = ctx.add(node, "Cast", [src], role=f"to_{stored}", to=stored)
    if compute_dtype(to) == to:
        ctx.add(node, "BitCast", [src], out=node.outputs[0], to=to)
        return
    bits = ctx.add(node, "BitCast", [src], role=f"as_{to}", to=to)
    ctx.onnx_types[node.outputs[0]] = to
    ctx.add(node, "Cast", [bits], out=node.outputs[0], to=compute_dtype(to))
