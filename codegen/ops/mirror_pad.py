"""MirrorPad: pad every axis with copies of the tensor's own elements (ONNX Pad with mode
reflect, edge or wrap; TFLite MIRROR_PAD is the reflect case).

`pads` is in ONNX order (all begins, then all ends), non-negative. `reflect` mirrors without
repeating the edge element, `edge` repeats it, `wrap` continues from the other end (numpy.pad's
modes of the same names). Constant padding is the Pad op. Any dtype; lowered to the shared
`index_map` kernel.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.index_map import lower_index_map
from codegen.ops.registry import Op, OpKind, register

MODES = ("reflect", "edge", "wrap")


def mirror_picks(node, shape) -> list[np.ndarray]:
    pads = [int(p) for p in node.attrs["pads"]]
    mode = node.attrs["mode"]
    rank = len(shape)
    if mode not in MODES:
        raise KilnError(f"MirrorPad mode '{mode}' is not one of {', '.join(MODES)}", node=node.name)
    if len(pads) != 2 * rank or any(p < 0 for p in pads):
        raise KilnError(f"MirrorPad pads {pads} must be {2 * rank} counts >= 0", node=node.name)
    picks = []
    for axis, d in enumerate(shape):
        before, after = pads[axis], pads[axis + rank]
        picks.append(np.pad(np.arange(d), (before, after), mode=mode))
    return picks


@register
class MirrorPad(Op):
    name = "MirrorPad"
    kind = OpKind.INJECTIVE
    attributes = {"pads": (), "mode": "reflect"}
    arity = (1, 1)
    kernels = ("index_map", "copy")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, tuple(p.size for p in mirror_picks(node, x.shape)))]

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        return [np.ascontiguousarray(x[np.ix_(*mirror_picks(node, x.shape))])]

    @classmethod
    def lower(cls, node, ctx):
        x = node.inputs[0]
        lower_index_map(node, ctx, x, node.outputs[0], mirror_picks(node, ctx.g.values[x].shape))
