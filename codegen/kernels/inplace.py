"""Declarations of in-place reuse: what a kernel allows, for the planner (called by the specs).

Lowering only says what is *safe for the kernel*; whether the input dies at that call, and
whether taking the reuse pays, is the memory planner's decision (codegen.memory.Alias). The
kernel registry then runs the in-place alternative of the depthwise calls whose pair the plan
took (codegen.kernels.select.planned).
"""

from __future__ import annotations

import numpy as np

from codegen.kernels.call import KernelCall, KernelContext
from codegen.kernels.linear import depthwise_rows_path
from codegen.ops.request import TensorArg



def allow_elementwise_inplace(ctx: KernelContext, call: KernelCall) -> KernelCall:
    """An elementwise kernel (out[i] from in[i] of each same-shaped input, read before it is
    written) may write its output over any input of the output's shape and byte size.
    Broadcast inputs are never candidates; if one shares storage with a candidate (a view of
    it), none is declared. Returns the call."""
    g = ctx.g
    out = call.writes[0]
    shape = g.values[out].shape
    tensors = [a.value for a in call.args if isinstance(a, TensorArg) and a.value != out]
    same = [v for v in tensors if g.values[v].shape == shape]
    roots = {ctx.root(v) for v in same}
    if any(ctx.root(v) in roots and g.values[v].shape != shape for v in tensors):
        return call
    for v in dict.fromkeys(same):
        ctx.allow_inplace(call, out, v)
    return call


def allow_depthwise_inplace(ctx: KernelContext, call: KernelCall, itemsize: int, alternative: str) -> None:
    """A depthwise call may run in place as its `alternative` kernel (same parameters, plus a
    one-channel temp): depth multiplier 1 and out_h * out_w <= in_h * in_w (see the template
    templates/kernels/reference/depthwise_conv2d_inplace_s8.c.j2). Declared by the reference
    specs only: the repacked variants' parameters differ from the ones the in-place kernel takes."""
    p = call.params
    if p["depth_multiplier"] != 1:
        return
    if p["out_h"] * p["out_w"] > p["in_h"] * p["in_w"] or not isinstance(call.args[0], TensorArg):
        return
    temp = int(p["batches"]) * int(p["in_h"]) * int(p["in_w"]) * itemsize
    ctx.allow_inplace(call, call.writes[0], call.args[0].value, alternative, temp)


def conv_overlap_shift(p: dict, itemsize: int, tile: int = 1, reads_first: bool = False) -> int:
    """The least offset(input) - offset(output) at which the reference conv kernel never
    overwrites input it has still to read. It writes output pixel q (all channels, row-major
    over batch, oy, ox) while reading q's window; every input pixel from m(q) on (the first
    pixel read by q or any later output pixel) is still needed. So output pixel q must end
    at or below input pixel m(q): (q + 1) * out_pixel <= shift + m(q) * in_pixel for all q.
    A kernel computing `tile` pixels at once (NEON's float conv: whole tiles of the pixels
    flattened over batches, then single ones) writes a tile s..s+tile-1 while reading any of
    its windows: the tile must end at or below m(s). A kernel that `reads_first` (every window
    of a tile copied to scratch before any of it is written: the DSP and Helium conv's pair of
    im2col columns, their depthwise kernels' padded input rows of an output row) only has to
    spare what later tiles read: the tile must end at or below m(s + tile)."""
    oy, ox = np.arange(p["out_h"]), np.arange(p["out_w"])

    def first_valid(start, size, k, dilation):
        """Index of the first tap inside [0, size) of each window, or a huge one if none."""
        taps = start[:, None] + np.arange(k)[None, :] * dilation
        inside = (taps >= 0) & (taps < size)
        return np.where(inside.any(axis=1), np.where(inside, taps, 1 << 40).min(axis=1), 1 << 40)

    fy = first_valid(oy * p["stride_h"] - p["pad_top"], p["in_h"], p["k_h"], p["dilation_h"])
    fx = first_valid(ox * p["stride_w"] - p["pad_left"], p["in_w"], p["k_w"], p["dilation_w"])
    first = np.minimum(fy[:, None] * p["in_w"] + fx[None, :], 1 << 40).reshape(-1)
    plane = p["in_h"] * p["in_w"]
    first = np.concatenate([first + n * plane for n in range(p["batches"])])
    needed = np.minimum.accumulate(first[::-1])[::-1]  # m(q): min over q' >= q
    out_px, in_px = p["out_c"] * itemsize, p["in_c"] * itemsize
    q = np.arange(first.size, dtype=np.int64)
    tiled = q < first.size - first.size % tile
    start = np.where(tiled, q - q % tile, q)
    end = np.where(tiled, start + tile, q + 1)
    spared = needed[start]
    if reads_first:  # m(end): the first pixel a later tile reads (none after the last tile)
        spared = np.concatenate([needed, [1 << 40]])[np.minimum(end, first.size)]
    finite = spared < (1 << 40)
    if not finite.any():
        return 0
    return max(int((end[finite] * out_px - spared[finite] * in_px).max()), 0)


def allow_conv_overlap(ctx: KernelContext, call: KernelCall, itemsize: int, tile: int = 1,
                       reads_first: bool = False) -> None:
    """A conv2d call may write its output partly over its input (TinyEngine-style partial
    overlap): the input starting `conv_overlap_shift` bytes or more above the output. Declared
    only when that overlap saves bytes (shift below the output's size), by the specs whose
    kernel reads no further ahead than `tile` pixels' windows: the reference kernels (1) and
    NEON's float one (codegen/kernels/neon/conv2d_f32.py), and, `reads_first`, the DSP and
    Helium int8 kernels (codegen/kernels/cortex_m_dsp, codegen/kernels/mve). A depthwise call
    (no out_c in its block) has in_c * depth_multiplier output channels."""
    p = call.params
    if "out_c" not in p:
        p = {**p, "out_c": p["in_c"] * p["depth_multiplier"]}
    allow_overlap_from(ctx, call, conv_overlap_shift(p, itemsize, tile, reads_first), itemsize, p["out_c"])


def allow_overlap_from(ctx: KernelContext, call: KernelCall, shift: int, itemsize: int, out_c: int) -> None:
    """A conv-shaped call may write its output over its input from `shift` bytes below it on,
    declared only when that saves bytes (shift below the output's size) and the input is a
    tensor: allow_conv_overlap's shift, or a kernel's own (NEON's float Winograd path)."""
    p = call.params
    if isinstance(call.args[0], TensorArg) and shift < p["batches"] * p["out_h"] * p["out_w"] * out_c * itemsize:
        ctx.allow_inplace(call, call.writes[0], call.args[0].value, overlap=shift)


def allow_pair_conv_overlap(ctx: KernelContext, call: KernelCall) -> None:
    """The DSP and Helium int8 conv kernels copy the windows of two output pixels of an image
    to scratch (a lone last pixel's twice) before they write either: tiles of two pixels that
    read first. The tiles restart with each image, which conv_overlap_shift's tiles over the
    flattened pixels only match for one image or an even count of pixels per image."""
    p = call.params
    if p["batches"] == 1 or (p["out_h"] * p["out_w"]) % 2 == 0:
        allow_conv_overlap(ctx, call, itemsize=1, tile=2, reads_first=True)


def allow_rows_depthwise_overlap(ctx: KernelContext, call: KernelCall, vector: int) -> None:
    """The DSP (`vector` 4) and Helium (1) int8 depthwise kernels: on their padded-rows path
    an output row's input rows are copied before the row is written (tiles of out_w pixels
    that read first); otherwise they read each pixel's window while writing its channels."""
    if depthwise_rows_path(call.params, vector):
        allow_conv_overlap(ctx, call, itemsize=1, tile=call.params["out_w"], reads_first=True)
    else:
        allow_conv_overlap(ctx, call, itemsize=1)
