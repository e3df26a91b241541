"""Row geometry of patch-based execution: which input rows an output row band needs.

A stage is a chain of NHWC ops that each map rows to rows: sliding-window ops (convolution,
depthwise convolution, pooling) and single-input elementwise ops. Along H each is described by
a `RowWindow` (kernel, stride, dilation, pads, input and output height). Going back through the
chain from an output band gives, for every tensor of the stage, the rows the band reads; the
band's copy of each op then takes only those rows, with real padding only where the band touches
the border of the tensor (an interior band reads the neighbouring rows instead).
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.ir.graph import Graph, Node
from codegen.ops.conv_geometry import output_size
from codegen.ops.registry import OpKind, get_op

# Names of the nodes a patched stage adds (codegen/fusion/patch.py; codegen/lower/band_views.py
# recognises them): unlikely in a model's own node names; a clash would only share constants.
PATCH_PREFIX = "kiln.patch."

# Ops whose output row y reads input rows [y*stride - pad_top, y*stride - pad_top + dilation*(k-1)]
# and nothing else (transposed and hybrid convolutions do not: the first scatters, the second
# quantizes its input with a scale taken over the whole tensor), with the weights, if any, as
# input 1 in OHWI / 1HWC layout and the window in the `kernel` attribute otherwise.
WINDOW_OPS = ("Conv2D", "DepthwiseConv2D", "GroupConv2D", "MaxPool2D", "AveragePool2D")


@dataclass(frozen=True)
class RowWindow:
    """The H axis of one op: out_size rows computed from in_size rows."""

    kernel: int
    stride: int
    dilation: int
    pad_top: int
    pad_bottom: int
    in_size: int
    out_size: int

    @property
    def span(self) -> int:
        """Input rows one output row reads (padding included)."""
        return self.dilation * (self.kernel - 1) + 1


@dataclass(frozen=True)
class RowSpan:
    """Input rows [lo, hi) a band reads, and the padding rows it still needs at the borders."""

    lo: int
    hi: int
    pad_top: int
    pad_bottom: int

    @property
    def rows(self) -> int:
        return self.hi - self.lo


IDENTITY_ROWS = (1, 1, 1, 0, 0)  # kernel, stride, dilation, pads of an elementwise op


def input_rows(w: RowWindow, out_lo: int, out_hi: int) -> RowSpan:
    """The input rows output rows [out_lo, out_hi) read; the band op computes exactly those
    output rows from them with pads (`pad_top`, `pad_bottom`)."""
    if not 0 <= out_lo < out_hi <= w.out_size:
        raise ValueError(f"output rows [{out_lo}, {out_hi}) outside [0, {w.out_size})")
    first = out_lo * w.stride - w.pad_top
    end = (out_hi - 1) * w.stride - w.pad_top + w.span
    lo, hi = max(first, 0), min(end, w.in_size)
    return RowSpan(lo, hi, lo - first, end - hi)


def band_bounds(rows: int, tiles: int) -> list[tuple[int, int]]:
    """`rows` split into `tiles` bands as equal as possible (the larger ones first)."""
    if not 1 <= tiles <= rows:
        raise ValueError(f"cannot split {rows} rows into {tiles} bands")
    base, extra = divmod(rows, tiles)
    bounds, lo = [], 0
    for k in range(tiles):
        hi = lo + base + (1 if k < extra else 0)
        bounds.append((lo, hi))
        lo = hi
    return bounds


def activation_input(node: Node) -> str:
    """The one input a stage op reads rows of (weights and bias are constants)."""
    return node.inputs[0]


def row_window(node: Node, g: Graph) -> RowWindow | None:
    """The H geometry of a node that can be part of a stage, or None."""
    ins = [i for i in node.inputs if i]
    if len(node.outputs) != 1 or not ins:
        return None
    x, y = g.values[ins[0]], g.values[node.outputs[0]]
    if len(x.shape) != 4 or len(y.shape) != 4 or x.is_const:
        return None
    if any(not g.values[i].is_const for i in ins[1:]):
        return None  # computed weights: not one row window
    if node.op in WINDOW_OPS:
        kernel = node.attrs["kernel"][0] if "kernel" in node.attrs else g.values[ins[1]].shape[1]
        stride, dilation = node.attrs["strides"][0], node.attrs.get("dilations", (1, 1))[0]
        top, _left, bottom, _right = node.attrs["pads"]
    elif get_op(node.op).kind is OpKind.ELEMENTWISE and len(ins) == 1 and x.shape == y.shape:
        kernel, stride, dilation, top, bottom = IDENTITY_ROWS
    else:
        return None
    w = RowWindow(int(kernel), int(stride), int(dilation), int(top), int(bottom), x.shape[1], y.shape[1])
    if output_size(w.in_size, w.kernel, w.stride, w.dilation, w.pad_top, w.pad_bottom) != w.out_size:
        return None
    return w


def chain_rows(windows: list[RowWindow], out_lo: int, out_hi: int) -> list[RowSpan]:
    """For a chain of ops (first to last) and rows [out_lo, out_hi) of the last one's output:
    the input rows each op reads, first op first."""
    spans: list[RowSpan] = []
    lo, hi = out_lo, out_hi
    for w in reversed(windows):
        span = input_rows(w, lo, hi)
        spans.append(span)
        lo, hi = span.lo, span.hi
    return spans[::-1]
