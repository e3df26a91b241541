"""Concat: join tensors along one axis (ONNX Concat, TFLite CONCATENATION).

Any dtype: the kernel moves bytes. Each input becomes one `concat` call that copies its
`outer` slices (one per index of the dimensions before the axis) into its place in every
output row, so one kernel serves any number of inputs. int8 never requantizes: TFLM's
CONCATENATION requires every input to carry the output's scale and zero point, and Kiln
refuses the same models.
"""

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.common import quant_of
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


def concat_axis(node, rank: int) -> int:
    axis = int(node.attrs["axis"])
    if not -rank <= axis < rank:
        raise KilnError(f"axis {axis} is out of range for rank {rank}", node=node.name)
    return axis % rank


@register
class Concat(Op):
    name = "Concat"
    kind = OpKind.INJECTIVE
    attributes = {"axis": 0}
    arity = (1, 64)
    kernels = ("concat",)

    @classmethod
    def infer(cls, node, ins):
        if any(v is None for v in ins):
            raise KilnError("Concat has an empty input", node=node.name)
        first = ins[0]
        rank = len(first.shape)
        if rank == 0:
            raise KilnError("Concat of scalars", node=node.name)
        axis = concat_axis(node, rank)
        total = 0
        for v in ins:
            if v.dtype != first.dtype:
                raise KilnError(f"Concat of {first.dtype} and {v.dtype}", node=node.name)
            same = len(v.shape) == rank and all(
                a == b for k, (a, b) in enumerate(zip(v.shape, first.shape)) if k != axis)
            if not same:
                raise KilnError(f"Concat on axis {axis} of shapes {list(first.shape)} and "
                                f"{list(v.shape)}", node=node.name)
            total += v.shape[axis]
        shape = list(first.shape)
        shape[axis] = total
        return [(first.dtype, tuple(shape))]

    @classmethod
    def check(cls, node, g):
        if g.values[node.outputs[0]].dtype != "int8":
            return
        qo = quant_of(g, node.outputs[0], node)
        for name in node.inputs:
            q = quant_of(g, name, node)
            if (q.scale, q.zero_point) != (qo.scale, qo.zero_point):
                raise KilnError(f"int8 Concat input '{name}' is quantized ({q.scale}, "
                                f"{q.zero_point}) unlike its output ({qo.scale}, {qo.zero_point}); "
                                f"TFLM does not requantize in CONCATENATION", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        return [np.concatenate(args, axis=concat_axis(node, args[0].ndim))]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        out = g.values[node.outputs[0]]
        axis = concat_axis(node, len(out.shape))
        item = np_dtype(out.dtype).itemsize
        outer = int(np.prod(out.shape[:axis], dtype=np.int64))
        inner = int(np.prod(out.shape[axis + 1:], dtype=np.int64)) * item
        offset = 0
        for k, name in enumerate(node.inputs):
            chunk = g.values[name].shape[axis] * inner
            if chunk > 0 and outer > 0:
                ctx.request(KernelRequest("concat", node, {"outer": outer, "chunk": chunk,
                                                           "out_stride": out.shape[axis] * inner, "out_offset": offset},
                                          (ctx.tensor(name), ctx.tensor(node.outputs[0])), part=f"in{k}"))
            offset += chunk
