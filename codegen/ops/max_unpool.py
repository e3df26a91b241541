"""MaxUnpool: values scattered to flat positions of a zero tensor (ONNX MaxUnpool, whose
indices are MaxPool's: flat over the whole unpooled tensor).

out = zeros(shape); out.flat[indices[i]] = x.flat[i] in order (a later duplicate wins).
Indices outside the output are dropped (ONNX leaves them undefined).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


@register
class MaxUnpool(Op):
    name = "MaxUnpool"
    kind = OpKind.OPAQUE
    attributes = {"shape": ()}
    arity = (2, 2)
    kernels = ("max_unpool_f32",)

    @classmethod
    def infer(cls, node, ins):
        x, idx = ins
        if x.shape != idx.shape:
            raise KilnError(f"MaxUnpool values {list(x.shape)} and indices {list(idx.shape)} differ in shape",
                            node=node.name)
        shape = tuple(int(d) for d in node.attrs["shape"])
        if not shape or min(shape) < 1:
            raise KilnError(f"MaxUnpool output shape {list(shape)} is not a positive static shape", node=node.name)
        return [(x.dtype, shape)]

    @classmethod
    def check(cls, node, g):
        x, idx = (g.values[i].dtype for i in node.inputs)
        if x != "float32" or idx != "int64":
            raise KilnError(f"MaxUnpool of {x} values and {idx} indices is not supported (float32, int64)",
                            node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        x, idx = (a.reshape(-1) for a in args)
        out = np.zeros(int(np.prod(node.attrs["shape"])), np.float32)
        keep = (idx >= 0) & (idx < out.size)
        for i in np.flatnonzero(keep):  # in order: a later duplicate index wins
            out[idx[i]] = x[i]
        return [out.reshape(node.attrs["shape"])]

    @classmethod
    def lower(cls, node, ctx):
        x = ctx.g.values[node.inputs[0]]
        out = ctx.g.values[node.outputs[0]]
        ctx.request(KernelRequest("max_unpool_f32", node, {"n": x.size, "size": out.size},
                                  (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]), ctx.tensor(node.outputs[0]))))
