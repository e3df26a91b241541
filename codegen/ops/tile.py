"""Tile: repeat the tensor `repeats[i]` times along each axis (ONNX Tile; not imported from TFLite).

Any dtype; lowered to the shared `index_map` kernel.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.index_map import lower_index_map
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.slice import require_nonempty


def tile_picks(node, shape) -> list[np.ndarray]:
    repeats = tuple(int(r) for r in node.attrs["repeats"])
    if len(repeats) != len(shape) or any(r < 0 for r in repeats):
        raise KilnError(f"Tile repeats {list(repeats)} must be {len(shape)} counts >= 0", node=node.name)
    return [np.tile(np.arange(d), r) for d, r in zip(shape, repeats)]


@register
class Tile(Op):
    name = "Tile"
    kind = OpKind.INJECTIVE
    attributes = {"repeats": ()}
    arity = (1, 1)
    kernels = ("index_map", "copy")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, require_nonempty(node, [p.size for p in tile_picks(node, x.shape)]))]

    @classmethod
    def reference(cls, node, args, g):
        return [np.tile(args[0], tuple(int(r) for r in node.attrs["repeats"]))]

    @classmethod
    def lower(cls, node, ctx):
        x = node.inputs[0]
        lower_index_map(node, ctx, x, node.outputs[0], tile_picks(node, ctx.g.values[x].shape))
