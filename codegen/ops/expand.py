"""Expand: broadcast the tensor to a shape (ONNX Expand, TFLite BROADCAST_TO).

The output shape is the numpy broadcast of the input's shape and `shape` (so a 1 in `shape`
keeps the input's size). Any dtype; lowered to the shared `index_map` kernel.
"""

from __future__ import annotations

import numpy as np

from codegen.ops.common import broadcast_shape
from codegen.ops.index_map import lower_index_map
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.slice import require_nonempty


def expand_picks(shape, out_shape) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """The input shape left-padded to the output rank, and its per-axis picks."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    return padded, [np.zeros(o, np.int64) if d == 1 else np.arange(o) for d, o in zip(padded, out_shape)]


@register
class Expand(Op):
    name = "Expand"
    kind = OpKind.BROADCAST
    attributes = {"shape": ()}
    arity = (1, 1)
    kernels = ("index_map", "copy")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, require_nonempty(node, broadcast_shape(node, x.shape, node.attrs["shape"])))]

    @classmethod
    def reference(cls, node, args, g):
        shape = g.values[node.outputs[0]].shape
        return [np.array(np.broadcast_to(args[0], shape))]

    @classmethod
    def lower(cls, node, ctx):
        x, out = node.inputs[0], node.outputs[0]
        padded, picks = expand_picks(ctx.g.values[x].shape, ctx.g.values[out].shape)
        lower_index_map(node, ctx, x, out, picks, in_shape=padded)
