"""BroadcastArgs: the broadcast of two shapes given as 1-D int32 / int64 tensors (TFLite
BROADCAST_ARGS), for shapes computed at run time (the TFLite frontend folds known ones).

As TFLM's reference_ops::BroadcastArgs: dimensions aligned from the end (a missing one is 1),
each output dimension the one that is not 1, each value taken as a C `int` (int64 values wrap
to 32 bits). Where both differ and neither is 1, TFLM stops the program (TFLITE_CHECK); the
kernel writes the first shape's dimension instead, so that it stays defined.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import C_SUFFIX
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

DTYPES = ("int32", "int64")


def broadcast_args(a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    """The kernel's result for 1-D shapes `a` and `b` (numpy)."""
    n = max(a.size, b.size)
    pad = (lambda s: np.concatenate([np.ones(n - s.size, np.int64), s.astype(np.int64)]))
    da, db = (((pad(s) + (1 << 31)) % (1 << 32)) - (1 << 31) for s in (a, b))  # TFLM's `int`
    return np.where(da == 1, db, da).astype(dtype)


@register
class BroadcastArgs(Op):
    name = "BroadcastArgs"
    kind = OpKind.OPAQUE
    arity = (2, 2)
    attributes: dict = {}
    kernels = tuple(f"broadcast_args_{C_SUFFIX[d]}" for d in DTYPES)

    @classmethod
    def infer(cls, node, ins):
        a, b = ins
        if a.dtype != b.dtype or len(a.shape) != 1 or len(b.shape) != 1:
            raise KilnError(f"BroadcastArgs needs two 1-D shapes of one type, not {a.dtype}{list(a.shape)} and "
                            f"{b.dtype}{list(b.shape)}", node=node.name)
        return [(a.dtype, (max(a.shape[0], b.shape[0]),))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, DTYPES)

    @classmethod
    def reference(cls, node, args, g):
        return [broadcast_args(args[0], args[1], args[0].dtype)]

    @classmethod
    def lower(cls, node, ctx):
        a, b = (ctx.g.values[i] for i in node.inputs)
        ctx.request(KernelRequest(f"broadcast_args_{C_SUFFIX[a.dtype]}", node,
                                  {"a_size": a.shape[0], "b_size": b.shape[0]}, headers=("kiln_fixedpoint.h",)))
