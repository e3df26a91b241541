"""Fold a Pad of height and width into the padding of the Conv2D / DepthwiseConv2D / MaxPool2D
that reads it.

Exact only where the op's own padding means the same as the Pad's value:
- float convolutions: padding taps add nothing, as zeros do (value 0.0);
- int8 convolutions: padding taps are skipped (TFLM), as taps equal to the input zero point
  are ((x - zp) * w = 0): the Pad's value must quantize to the zero point;
- max pooling: padded positions never win, as -inf (float) or -128 (int8) would not, provided
  every window still covers an input element (the pool's pads stay below its kernel).
Average pooling excludes padding from the count, which no Pad value reproduces: never folded.

Needs: a verified graph, NHWC (only Pads of axes 1 and 2 of a rank-4 tensor fold). Keeps:
every output's value bit for bit, output names. The Pad must have no other reader.
"""

from __future__ import annotations

import math

from codegen.ir.graph import Graph, Node
from codegen.ops.pad import int8_pad_value
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import clone, merged_origin, sole_consumer

_CONVS = ("Conv2D", "DepthwiseConv2D")


def _hw_pads(pad: Node) -> tuple[int, int, int, int] | None:
    """(top, left, bottom, right) of a rank-4 Pad that pads only axes 1 and 2."""
    p = [int(v) for v in pad.attrs["pads"]]
    if len(p) != 8 or p[0] or p[3] or p[4] or p[7]:
        return None
    return p[1], p[2], p[5], p[6]


def _value_fits(g: Graph, pad: Node, op: str) -> bool:
    x = g.values[pad.inputs[0]]
    if x.dtype == "float32":
        value = float(pad.attrs["value"])
        return value == 0.0 if op in _CONVS else value == -math.inf
    if x.dtype != "int8" or x.quant is None or x.quant.per_channel:
        return False
    if g.values[pad.outputs[0]].quant != x.quant:
        return False
    return int8_pad_value(pad, g) == (x.quant.zp if op in _CONVS else -128)


def fold_pad(g: Graph) -> Graph:
    g = clone(g)
    changed = False
    for pad in list(g.nodes):
        if pad.op != "Pad":
            continue
        reader = sole_consumer(g, pad.outputs[0])
        hw = _hw_pads(pad)
        if reader is None or hw is None or reader.inputs[0] != pad.outputs[0]:
            continue
        if reader.op not in _CONVS + ("MaxPool2D",) or not _value_fits(g, pad, reader.op):
            continue
        pads = tuple(a + b for a, b in zip(reader.attrs["pads"], hw))
        if reader.op == "MaxPool2D":
            kh, kw = reader.attrs["kernel"]
            if max(pads[0], pads[2]) >= kh or max(pads[1], pads[3]) >= kw:
                continue
        reader.inputs[0] = pad.inputs[0]
        reader.attrs["pads"] = pads
        reader.origin = merged_origin(pad, reader)
        changed = True
    return eliminate_dead_code(g) if changed else g
