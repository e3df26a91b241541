"""ScatterReduce: out = data, then out.flat[offsets[k]] = reduce(out.flat[offsets[k]], updates.flat[k])
for every update k in order (ONNX ScatterElements / ScatterND with a reduction, Col2Im);
float32.

`offsets` is a constant int64 tensor with one entry per update (-1: the update is dropped);
the frontend computes it from the constant indices. `reduction` is add, mul, max or min
("none" lowers to Take instead). Updates that land on the same element combine in order,
as numpy's ufunc.at does, so the reference matches the kernel to the bit.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

REDUCTIONS = {"add": (0, np.add), "mul": (1, np.multiply), "max": (2, np.maximum), "min": (3, np.minimum)}


@register
class ScatterReduce(Op):
    name = "ScatterReduce"
    kind = OpKind.OPAQUE
    attributes = {"reduction": "add"}
    arity = (3, 3)
    kernels = ("scatter_reduce_f32",)

    @classmethod
    def infer(cls, node, ins):
        data, updates, offsets = ins
        if node.attrs["reduction"] not in REDUCTIONS:
            raise KilnError(f"ScatterReduce reduction '{node.attrs['reduction']}' is not one of "
                            f"{', '.join(REDUCTIONS)}", node=node.name)
        if offsets.dtype != "int64" or not offsets.is_const or offsets.size != updates.size:
            raise KilnError("ScatterReduce offsets must be a constant int64 tensor with one entry per update",
                            node=node.name)
        flat = offsets.data.reshape(-1)
        if flat.size and (flat.min() < -1 or flat.max() >= data.size):
            raise KilnError("ScatterReduce offset outside the data", node=node.name)
        if updates.dtype != data.dtype:
            raise KilnError(f"ScatterReduce of {data.dtype} data with {updates.dtype} updates", node=node.name)
        return [(data.dtype, data.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        data, updates, offsets = args
        out = data.copy().reshape(-1)
        keep = offsets.reshape(-1) >= 0
        ufunc = REDUCTIONS[node.attrs["reduction"]][1]
        ufunc.at(out, offsets.reshape(-1)[keep], updates.reshape(-1)[keep])
        return [out.reshape(data.shape)]

    @classmethod
    def lower(cls, node, ctx):
        data, updates, offsets = node.inputs
        table = ctx.constant(node, "offsets", ctx.g.values[offsets].data, "int32")
        ctx.request(KernelRequest("scatter_reduce_f32", node, {
            "n": ctx.g.values[data].size, "count": ctx.g.values[updates].size,
            "reduction": REDUCTIONS[node.attrs["reduction"]][0], "offsets": table},
            (ctx.tensor(data), ctx.tensor(updates), ctx.tensor(node.outputs[0]))))
