"""BitwiseNot: every bit of an integer tensor flipped (ONNX BitwiseNot)."""

from __future__ import annotations

import numpy as np

from codegen.ops.bitwise import INTEGERS, WIDTHS, width_suffix
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


@register
class BitwiseNot(Op):
    name = "BitwiseNot"
    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    kernels = tuple(f"bitwise_not_{w}" for w in WIDTHS)

    @classmethod
    def infer(cls, node, ins):
        return [(ins[0].dtype, ins[0].shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, INTEGERS)

    @classmethod
    def reference(cls, node, args, g):
        return [np.invert(args[0])]

    @classmethod
    def lower(cls, node, ctx):
        x, out = node.inputs[0], node.outputs[0]
        call = ctx.request(KernelRequest(f"bitwise_not_{width_suffix(ctx.g.values[x].dtype)}", node,
                                         {"n": ctx.g.values[x].size}, (ctx.tensor(x), ctx.tensor(out))))
        ctx.allow_inplace(call, out, x)
