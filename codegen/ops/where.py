"""Where: x where cond is true, else y, all three broadcast (ONNX Where, TFLite SELECT_V2).

Any dtype for x and y (the kernel moves elements as bytes); cond is bool. int8 x and y must
share the output's quantization (a select does not requantize).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.common import broadcast_plan, broadcast_shape
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


@register
class Where(Op):
    name = "Where"
    kind = OpKind.BROADCAST
    arity = (3, 3)
    kernels = ("where",)

    @classmethod
    def infer(cls, node, ins):
        c, x, y = ins
        if c.dtype != "bool":
            raise KilnError(f"Where condition is {c.dtype}, not bool", node=node.name)
        if x.dtype != y.dtype:
            raise KilnError(f"Where of {x.dtype} and {y.dtype}", node=node.name)
        return [(x.dtype, broadcast_shape(node, c.shape, x.shape, y.shape))]

    @classmethod
    def check(cls, node, g):
        out = g.values[node.outputs[0]]
        if out.dtype == "int8":
            for name in node.inputs[1:]:
                if g.values[name].quant != out.quant:
                    raise KilnError(f"int8 Where needs '{name}' quantized as its output", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        c, x, y = args
        out = np.where(c, x, y).astype(x.dtype)
        return [np.array(np.broadcast_to(out, g.values[node.outputs[0]].shape))]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        out = g.values[node.outputs[0]]
        dims, (sc, sx, sy) = broadcast_plan(node, out.shape, *(g.values[i].shape for i in node.inputs))
        ctx.request(KernelRequest("where", node, {"dims": dims, "c_strides": sc, "x_strides": sx, "y_strides": sy,
                                                  "elem": np_dtype(out.dtype).itemsize}))
