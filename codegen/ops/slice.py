"""Slice: a strided window of every axis (ONNX Slice, TFLite STRIDED_SLICE / SLICE).

`starts`, `ends` and `steps` give one entry per input axis, with ONNX's semantics: negative
positions count from the end, then positions are clamped to the axis ([0, dim] for positive
steps, [-1, dim - 1] for negative ones), and the axis runs from start towards end (excluded)
by step. Any dtype; lowered to the shared `index_map` kernel. int8 keeps its quantization.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.index_map import lower_index_map
from codegen.ops.registry import Op, OpKind, register


def slice_indices(dim: int, start: int, end: int, step: int) -> np.ndarray:
    """The input indices an ONNX slice of one axis of size `dim` visits, in order."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
    else:
        start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return np.arange(start, end, step, dtype=np.int64)


def slice_picks(node, shape) -> list[np.ndarray]:
    starts, ends, steps = (tuple(int(v) for v in node.attrs[k]) for k in ("starts", "ends", "steps"))
    rank = len(shape)
    if not len(starts) == len(ends) == len(steps) == rank:
        raise KilnError(f"Slice needs starts, ends and steps for all {rank} axes, got {len(starts)}, "
                        f"{len(ends)}, {len(steps)}", node=node.name)
    if 0 in steps:
        raise KilnError("Slice step 0", node=node.name)
    return [slice_indices(d, a, b, s) for d, a, b, s in zip(shape, starts, ends, steps)]


def require_nonempty(node, shape) -> tuple[int, ...]:
    if 0 in shape:
        raise KilnError(f"{node.op} gives an empty tensor {list(shape)} (Kiln has no empty tensors)",
                        node=node.name)
    return tuple(shape)


@register
class Slice(Op):
    name = "Slice"
    kind = OpKind.INJECTIVE
    attributes = {"starts": (), "ends": (), "steps": ()}
    arity = (1, 1)
    kernels = ("index_map", "copy")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, require_nonempty(node, [p.size for p in slice_picks(node, x.shape)]))]

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        return [np.ascontiguousarray(x[np.ix_(*slice_picks(node, x.shape))])]

    @classmethod
    def lower(cls, node, ctx):
        x = node.inputs[0]
        lower_index_map(node, ctx, x, node.outputs[0], slice_picks(node, ctx.g.values[x].shape))
