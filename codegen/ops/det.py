"""Det: the determinant of each square matrix in the last two axes (ONNX Det).

Gaussian elimination with partial pivoting on a scratch copy of each matrix, in float32; the
numpy reference computes in float64 (LAPACK's LU) and rounds, so the two differ by float32
rounding of the elimination (tests allow 1e-4 of the result's magnitude on well-conditioned
matrices).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register


@register
class Det(Op):
    name = "Det"
    kind = OpKind.OPAQUE
    arity = (1, 1)
    kernels = ("det_f32",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
            raise KilnError(f"Det needs square matrices in the last two axes, got {list(x.shape)}", node=node.name)
        return [(x.dtype, tuple(x.shape[:-2]))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        return [np.linalg.det(args[0].astype(np.float64)).astype(np.float32)]

    @classmethod
    def lower(cls, node, ctx):
        x = ctx.g.values[node.inputs[0]]
        n = x.shape[-1]
        ctx.request(KernelRequest("det_f32", node, {"count": x.size // (n * n), "n": n},
                                  (ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0]), ScratchArg(4 * n * n))))
