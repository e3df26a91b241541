"""Reshape: a new static shape over the same elements (also ONNX Flatten/Squeeze/Unsqueeze).

Lowered as a view sharing its input's storage; a copy only where input or output is a
caller's buffer or a constant.
"""

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


@register
class Reshape(Op):
    name = "Reshape"
    kind = OpKind.INJECTIVE
    attributes = {"shape": ()}
    arity = (1, 1)
    kernels = ("copy",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        shape = tuple(int(d) for d in node.attrs["shape"])
        if int(np.prod(shape, dtype=np.int64)) != x.size:
            raise KilnError(f"cannot reshape {list(x.shape)} to {list(shape)}", node=node.name)
        return [(x.dtype, shape)]

    @classmethod
    def reference(cls, node, args, g):
        return [args[0].reshape(node.attrs["shape"])]

    @classmethod
    def lower(cls, node, ctx):
        src, out = node.inputs[0], node.outputs[0]
        if not ctx.alias(out, src):
            emit_copy(node, ctx, src, out)


def emit_copy(node, ctx, src: str, out: str) -> None:
    """A byte copy of `src` into `out` (used where a view cannot alias)."""
    ctx.request(KernelRequest("copy", node, {"nbytes": ctx.g.values[out].nbytes}, (ctx.tensor(src), ctx.tensor(out))))
