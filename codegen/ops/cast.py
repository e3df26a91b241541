"""Cast: convert elements to another dtype (ONNX Cast / CastLike, TFLite CAST).

Between float32, int8, uint8, int16, int32, int64 and bool, as numpy's astype does, except
that float to integer saturates to the target's range (NaN gives 0) where C would have
undefined behaviour: ONNX leaves out-of-range conversions undefined. Integers convert to
narrower integers modulo 2**bits; anything non-zero is true. int8 values are converted
raw (a Cast does not dequantize). A cast to the same dtype is a view.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.reshape import emit_copy

# Element type codes of the kernel (templates/kernels/reference/cast.c.j2).
TYPE_CODES = {"float32": 0, "int8": 1, "uint8": 2, "int16": 3, "int32": 4, "int64": 5, "bool": 6}


def cast_array(x: np.ndarray, dtype: str) -> np.ndarray:
    """numpy's astype with Kiln's saturating float -> integer conversion."""
    target = np_dtype(dtype)
    if x.dtype == np.float32 and np.issubdtype(target, np.integer):
        info = np.iinfo(target)
        wide = np.trunc(np.clip(np.nan_to_num(x.astype(np.float64), nan=0.0), float(info.min), float(info.max)))
        top = wide >= float(info.max)  # float64 cannot hold INT64_MAX exactly
        out = np.where(top, 0, wide).astype(target)
        out[top] = info.max
        return out
    with np.errstate(all="ignore"):
        return x.astype(target)


@register
class Cast(Op):
    name = "Cast"
    kind = OpKind.ELEMENTWISE
    attributes = {"to": "float32"}
    arity = (1, 1)
    kernels = ("cast", "copy")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        to = node.attrs["to"]
        if to not in TYPE_CODES:
            raise KilnError(f"Cast to {to} is not supported (supported: {', '.join(TYPE_CODES)})",
                            node=node.name)
        return [(to, x.shape)]

    @classmethod
    def check(cls, node, g):
        src = g.values[node.inputs[0]].dtype
        if src not in TYPE_CODES:
            raise KilnError(f"Cast from {src} is not supported", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        return [cast_array(args[0], node.attrs["to"])]

    @classmethod
    def lower(cls, node, ctx):
        src, out = node.inputs[0], node.outputs[0]
        x = ctx.g.values[src]
        if x.dtype == node.attrs["to"]:
            if not ctx.alias(out, src):
                emit_copy(node, ctx, src, out)
            return
        ctx.call(node, "cast", {"n": x.size, "from": TYPE_CODES[x.dtype], "to": TYPE_CODES[node.attrs["to"]]},
                 [ctx.tensor(src), ctx.tensor(out)])
