"""Ops that read or write at positions computed at run time: MaxUnpool, RoiAlign, DeformConv
(one Kiln op each, channels first as ONNX has them)."""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import converter


@converter("MaxUnpool")
def convert_max_unpool(ctx, node):
    """Scattered into the unpooled shape (from the kernel, strides and pads), then zero-padded at
    the end to `output_shape` when that is larger (as ONNX's reference places it)."""
    x = node.input(0)
    shape = ctx.shape(x)
    n = len(shape) - 2
    kernel = [int(k) for k in node.attr("kernel_shape", [])]
    strides = [int(s) for s in node.attr("strides", [1] * n)]
    pads = [int(p) for p in node.attr("pads", [0] * 2 * n)]
    if len(kernel) != n or len(strides) != n or len(pads) != 2 * n:
        raise node.error(f"kernel_shape {kernel}, strides {strides} and pads {pads} do not fit {n} spatial axes")
    unpooled = tuple(shape[:2]) + tuple((shape[2 + d] - 1) * strides[d] - pads[d] - pads[n + d] + kernel[d]
                                        for d in range(n))
    final = unpooled
    if node.input(2):
        final = tuple(int(d) for d in ctx.require_const(node, 2, "output_shape").reshape(-1))
        if len(final) != len(unpooled) or any(f < u for f, u in zip(final, unpooled)):
            raise node.error(f"output_shape {list(final)} is smaller than the unpooled shape {list(unpooled)}")
    if final == unpooled:
        ctx.add(node, "MaxUnpool", [ctx.kiln(x), ctx.kiln(node.input(1))], out=node.outputs[0], shape=unpooled)
        return
    y = ctx.add(node, "MaxUnpool", [ctx.kiln(x), ctx.kiln(node.input(1))], role="scatter", shape=unpooled)
    ctx.add(node, "Pad", [y], out=node.outputs[0],
            pads=(0,) * len(final) + tuple(f - u for f, u in zip(final, unpooled)), value=0.0)


@converter("RoiAlign")
def convert_roi_align(ctx, node):
    """Opset 10 has no coordinate_transformation_mode: it behaves as output_half_pixel."""
    default = "half_pixel" if ctx.opset >= 16 else "output_half_pixel"
    mode = node.attr("coordinate_transformation_mode", default)
    if mode not in ("half_pixel", "output_half_pixel"):
        raise node.error(f"coordinate_transformation_mode '{mode}' is not half_pixel or output_half_pixel")
    ctx.add(node, "RoiAlign", [ctx.kiln(node.input(i)) for i in range(3)], out=node.outputs[0],
            mode=str(node.attr("mode", "avg")).lower(), output_height=int(node.attr("output_height", 1)),
            output_width=int(node.attr("output_width", 1)), sampling_ratio=int(node.attr("sampling_ratio", 0)),
            spatial_scale=float(node.attr("spatial_scale", 1.0)), half_pixel=mode == "half_pixel")


@converter("DeformConv")
def convert_deform_conv(ctx, node):
    """An absent bias is zeros, an absent mask ones (constants of the op's shapes)."""
    x, w = node.input(0), node.input(1)
    if (node.attr("auto_pad", "NOTSET") or "NOTSET") != "NOTSET":
        raise node.error("auto_pad is not supported for DeformConv (give explicit pads)")
    if len(ctx.shape(x)) != 4:
        raise node.error(f"input must be NCHW (2-D deformable convolution), got {list(ctx.shape(x))}")
    o, _, kh, kw = ctx.shape(w)
    n, oh, ow = ctx.shape(node.input(2))[0], *ctx.shape(node.input(2))[2:]
    offset_group = int(node.attr("offset_group", 1))
    bias = ctx.kiln(node.input(3)) if node.input(3) else ctx.weight(node, "zero_bias", np.zeros(o, np.float32))
    mask = ctx.kiln(node.input(4)) if node.input(4) else \
        ctx.weight(node, "unit_mask", np.ones((n, offset_group * kh * kw, oh, ow), np.float32))
    ctx.add(node, "DeformConv2D", [ctx.kiln(x), ctx.kiln(w), ctx.kiln(node.input(2)), bias, mask],
            out=node.outputs[0], strides=tuple(int(s) for s in node.attr("strides", [1, 1])),
            dilations=tuple(int(d) for d in node.attr("dilations", [1, 1])),
            pads=tuple(int(p) for p in node.attr("pads", [0, 0, 0, 0])), group=int(node.attr("group", 1)),
            offset_group=offset_group)
