"""Running sums and products along one axis (CumSum, CumProd): the shared part. float32 and the integers (wrapping).

`exclusive` leaves each element out of its own result (the first one is the identity);
`reverse` runs from the end of the axis. The tensor is walked as [outer, depth, inner]
around the axis (Softmax's geometry); each result combines in order along the axis, as
numpy.cumsum / cumprod do, so reference and kernel agree to the bit.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.ir.types import INTEGER_DTYPES
from codegen.ops.broadcast_binary import SUFFIX, kernel_names
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind
from codegen.ops.request import KernelRequest
from codegen.ops.softmax import normalized_axis, row_geometry


class CumulativeOp(Op):
    kind = OpKind.OPAQUE
    attributes = {"axis": 0, "exclusive": False, "reverse": False}
    arity = (1, 1)
    numpy_fn: ClassVar = None
    identity: ClassVar[float]
    is_product: ClassVar[bool]
    kernels = kernel_names("cumulative", ("float32", *INTEGER_DTYPES))

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        normalized_axis(node, len(x.shape))
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32", *INTEGER_DTYPES))

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        axis = normalized_axis(node, x.ndim)
        y = np.flip(x, axis) if node.attrs["reverse"] else x
        if node.attrs["exclusive"]:
            first = np.full_like(np.take(y, [0], axis=axis), cls.identity)
            y = np.concatenate([first, np.take(y, np.arange(y.shape[axis] - 1), axis=axis)], axis=axis)
        y = cls.numpy_fn(y, axis=axis, dtype=x.dtype)
        return [np.ascontiguousarray(np.flip(y, axis) if node.attrs["reverse"] else y)]

    @classmethod
    def lower(cls, node, ctx):
        x, out = node.inputs[0], node.outputs[0]
        geo = row_geometry(node, ctx.g.values[x].shape)
        params = {**geo, "product": cls.is_product, "exclusive": bool(node.attrs["exclusive"]),
                  "reverse": bool(node.attrs["reverse"])}
        ctx.request(KernelRequest(f"cumulative_{SUFFIX[ctx.g.values[x].dtype]}", node, params,
                                  (ctx.tensor(x), ctx.tensor(out))))
