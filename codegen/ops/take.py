"""Take: out[i] = data.flat[indices[i]], or zero where indices[i] is -1 (numpy.take on the
flattened data, plus a fill).

`indices` is a constant int64 tensor of the output's shape. The ONNX frontend computes it at
compile time for any op that only moves elements whose positions are known statically
(GatherElements / GatherND / Compress / ReverseSequence with constant indices, Trilu,
ScatterND / ScatterElements without reduction on the data and updates concatenated), by
running ONNX's reference implementation of that op on the element positions instead of the
data. Any dtype: the kernel copies elements as bytes; int8 keeps its quantization.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


@register
class Take(Op):
    name = "Take"
    kind = OpKind.INJECTIVE
    arity = (2, 2)
    kernels = ("take",)

    @classmethod
    def infer(cls, node, ins):
        data, idx = ins
        if idx.dtype != "int64" or not idx.is_const:
            raise KilnError("Take indices must be a constant int64 tensor", node=node.name)
        flat = idx.data.reshape(-1)
        if flat.size and (flat.min() < -1 or flat.max() >= data.size):
            raise KilnError(f"Take index outside the {data.size} elements of the data", node=node.name)
        if 0 in idx.shape:
            raise KilnError("Take gives an empty tensor", node=node.name)
        return [(data.dtype, tuple(idx.shape))]

    @classmethod
    def reference(cls, node, args, g):
        data, idx = args
        flat = np.concatenate([data.reshape(-1), np.zeros(1, data.dtype)])
        return [flat[np.where(idx < 0, data.size, idx)]]

    @classmethod
    def lower(cls, node, ctx):
        data, idx = node.inputs
        elem = np_dtype(ctx.g.values[data].dtype).itemsize
        offsets = ctx.g.values[idx].data.reshape(-1)
        table = ctx.constant(node, "offsets", np.where(offsets < 0, -1, offsets * elem), "int32")
        ctx.request(KernelRequest("take", node, {"n": int(offsets.size), "elem": elem, "table": table},
                                  (ctx.tensor(data), ctx.tensor(node.outputs[0]))))
