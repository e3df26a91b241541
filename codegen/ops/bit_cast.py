"""BitCast: the same bytes read as another dtype of the same width (ONNX BitCast).

No value changes, so it is a view of its input (a copy where input or output is a caller's
buffer or a constant); little-endian, as every Kiln target is.
"""

from __future__ import annotations

from codegen.errors import KilnError
from codegen.ir.types import C_TYPES, np_dtype
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.reshape import emit_copy


@register
class BitCast(Op):
    name = "BitCast"
    kind = OpKind.INJECTIVE
    attributes = {"to": "int32"}
    arity = (1, 1)
    kernels = ("copy",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        to = node.attrs["to"]
        if to not in C_TYPES:
            raise KilnError(f"BitCast to {to} is not supported (supported: {', '.join(C_TYPES)})", node=node.name)
        if np_dtype(to).itemsize != np_dtype(x.dtype).itemsize:
            raise KilnError(f"BitCast from {x.dtype} to {to} changes the element width", node=node.name)
        return [(to, x.shape)]

    @classmethod
    def reference(cls, node, args, g):
        return [args[0].view(np_dtype(node.attrs["to"]))]

    @classmethod
    def lower(cls, node, ctx):
        src, out = node.inputs[0], node.outputs[0]
        if not ctx.alias(out, src):
            emit_copy(node, ctx, src, out)
