"""Split: cut the tensor along `axis` into consecutive parts of the given sizes (ONNX Split,
TFLite SPLIT / SPLIT_V). One output per entry of `split`.

Any dtype; each part is one call of the shared `index_map` kernel.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.index_map import lower_index_map
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.softmax import normalized_axis


def split_parts(node, shape) -> tuple[int, list[tuple[int, int]]]:
    """The axis and each part's (begin, end) along it."""
    axis = normalized_axis(node, len(shape))
    sizes = [int(s) for s in node.attrs["split"]]
    if not sizes or any(s <= 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise KilnError(f"Split sizes {sizes} must be positive and add up to {shape[axis]}", node=node.name)
    bounds = np.cumsum([0] + sizes)
    return axis, [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


@register
class Split(Op):
    name = "Split"
    kind = OpKind.INJECTIVE
    attributes = {"axis": 0, "split": ()}
    arity = (1, 1)
    kernels = ("index_map",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        axis, parts = split_parts(node, x.shape)
        return [(x.dtype, tuple(b - a if i == axis else d for i, d in enumerate(x.shape))) for a, b in parts]

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        axis, parts = split_parts(node, x.shape)
        return [np.ascontiguousarray(np.take(x, np.arange(a, b), axis=axis)) for a, b in parts]

    @classmethod
    def lower(cls, node, ctx):
        src = node.inputs[0]
        shape = ctx.g.values[src].shape
        axis, parts = split_parts(node, shape)
        for k, ((a, b), out) in enumerate(zip(parts, node.outputs)):
            picks = [np.arange(a, b) if i == axis else np.arange(d) for i, d in enumerate(shape)]
            lower_index_map(node, ctx, src, out, picks, part=f"part{k}")
