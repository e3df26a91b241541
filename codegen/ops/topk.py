"""TopK: the k largest (or smallest) elements along `axis`, in order, and their int64 indices
(ONNX TopK; not imported from TFLite); float32 and integer values (not quantized int8).

Equal values keep the lower index first (ONNX's rule). The kernel selects one element at a
time (k passes over the axis, marking taken positions in a scratch byte per element), fine
for the small k of classification heads.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import INTEGER_DTYPES
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.ops.broadcast_binary import SUFFIX, kernel_names
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.softmax import normalized_axis, row_geometry


@register
class TopK(Op):
    name = "TopK"
    kind = OpKind.OPAQUE
    attributes = {"k": 1, "axis": -1, "largest": True}
    arity = (1, 1)
    kernels = kernel_names("topk", ("float32", *INTEGER_DTYPES))

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        axis = normalized_axis(node, len(x.shape))
        k = int(node.attrs["k"])
        if not 1 <= k <= x.shape[axis]:
            raise KilnError(f"TopK k={k} must be 1..{x.shape[axis]}", node=node.name)
        shape = tuple(k if i == axis else d for i, d in enumerate(x.shape))
        return [(x.dtype, shape), ("int64", shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32", *INTEGER_DTYPES))

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        axis = normalized_axis(node, x.ndim)
        descending = -x if x.dtype == np.float32 else ~x  # ~ reverses integer order without overflow
        order = np.argsort(descending if node.attrs["largest"] else x, axis=axis, kind="stable")
        idx = np.take(order, np.arange(int(node.attrs["k"])), axis=axis)
        return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)]

    @classmethod
    def lower(cls, node, ctx):
        x = node.inputs[0]
        geo = row_geometry(node, ctx.g.values[x].shape)
        params = {**geo, "k": int(node.attrs["k"]), "largest": bool(node.attrs["largest"])}
        ctx.request(KernelRequest(f"topk_{SUFFIX[ctx.g.values[x].dtype]}", node, params,
                                  (ctx.tensor(x), ctx.tensor(node.outputs[0]), ctx.tensor(node.outputs[1]),
                                   ScratchArg(geo["depth"]))))
