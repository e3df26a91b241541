"""DeformConv2D: a 2-D convolution whose every kernel tap reads the input at a learned offset,
bilinearly interpolated, and optionally scaled by a mask (ONNX DeformConv; channels first).

Inputs x [N, C, H, W], w [O, C/group, KH, KW], offset [N, offset_group * KH * KW * 2, OH, OW]
(per offset group and tap: the (dy, dx) pair), b [O], mask [N, offset_group * KH * KW, OH, OW].
Tap (i, j) of output (oh, ow) samples at (oh * stride - pad_top + i * dilation + dy,
ow * stride - pad_left + j * dilation + dx); corners outside the input count as 0 (ONNX's
reference: GridSample, align_corners, zeros padding). All five inputs may be computed at run time.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


def deform_output_size(node, x_shape, w_shape) -> tuple[int, int]:
    a = node.attrs
    out = []
    for d in range(2):
        span = (w_shape[2 + d] - 1) * a["dilations"][d] + 1
        room = x_shape[2 + d] + a["pads"][d] + a["pads"][2 + d] - span
        if room < 0:
            raise KilnError(f"DeformConv2D kernel of span {span} does not fit input axis {2 + d} of "
                            f"{x_shape[2 + d]} with its pads", node=node.name)
        out.append(room // a["strides"][d] + 1)
    return out[0], out[1]


@register
class DeformConv2D(Op):
    name = "DeformConv2D"
    kind = OpKind.OPAQUE
    attributes = {"strides": (1, 1), "dilations": (1, 1), "pads": (0, 0, 0, 0), "group": 1, "offset_group": 1}
    arity = (5, 5)
    kernels = ("deform_conv2d_f32",)

    @classmethod
    def infer(cls, node, ins):
        x, w, offset, b, mask = ins
        a = node.attrs
        n, c = x.shape[:2]
        o, cg, kh, kw = w.shape
        oh, ow = deform_output_size(node, x.shape, w.shape)
        taps, og = kh * kw, int(a["offset_group"])
        if c != cg * a["group"] or o % a["group"] or c % og:
            raise KilnError(f"DeformConv2D: weights {list(w.shape)} with group={a['group']} and offset_group={og} "
                            f"do not fit {c} input channels", node=node.name)
        for name, value, want in (("offset", offset, (n, og * taps * 2, oh, ow)), ("b", b, (o,)),
                                  ("mask", mask, (n, og * taps, oh, ow))):
            if tuple(value.shape) != want:
                raise KilnError(f"DeformConv2D {name} is {list(value.shape)}, expected {list(want)}", node=node.name)
        return [(x.dtype, (n, o, oh, ow))]

    @classmethod
    def check(cls, node, g):
        dtypes = {g.values[i].dtype for i in node.inputs}
        if dtypes != {"float32"}:
            raise KilnError(f"DeformConv2D on {', '.join(sorted(dtypes))} is not supported (float32)", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        x, w, offset, b, mask = (a.astype(np.float32) for a in args)
        a = node.attrs
        n, c, height, width = x.shape
        o, cg, kh, kw = w.shape
        oh, ow = deform_output_size(node, x.shape, w.shape)
        og = int(a["offset_group"])
        offset = offset.reshape(n, og, kh, kw, 2, oh, ow)
        mask = mask.reshape(n, og, kh, kw, oh, ow)
        per_group = o // a["group"]
        rows = np.arange(oh, dtype=np.float32)[:, None] * a["strides"][0] - a["pads"][0]
        cols = np.arange(ow, dtype=np.float32)[None, :] * a["strides"][1] - a["pads"][1]
        y = np.broadcast_to(b.reshape(1, o, 1, 1), (n, o, oh, ow)).copy()
        for bi in range(n):
            for ci in range(c):
                group, og_index = ci // cg, ci // (c // og)
                outs = slice(group * per_group, (group + 1) * per_group)
                for i in range(kh):
                    for j in range(kw):
                        hs = rows + np.float32(i * a["dilations"][0]) + offset[bi, og_index, i, j, 0]
                        ws = cols + np.float32(j * a["dilations"][1]) + offset[bi, og_index, i, j, 1]
                        v = _bilinear_zeros(x[bi, ci], hs, ws) * mask[bi, og_index, i, j]
                        y[bi, outs] += w[outs, ci % cg, i, j][:, None, None] * v[None]
        return [y.astype(np.float32)]

    @classmethod
    def macs(cls, node, g):
        out = g.values[node.outputs[0]]
        _, cg, kh, kw = g.values[node.inputs[1]].shape
        return out.size * cg * kh * kw

    @classmethod
    def lower(cls, node, ctx):
        a = node.attrs
        x, w = (ctx.g.values[i].shape for i in node.inputs[:2])
        oh, ow = deform_output_size(node, x, w)
        ctx.request(KernelRequest("deform_conv2d_f32", node, {
            "batch": x[0], "channels": x[1], "height": x[2], "width": x[3], "out_channels": w[0],
            "kernel_h": w[2], "kernel_w": w[3], "out_h": oh, "out_w": ow, "stride_h": a["strides"][0],
            "stride_w": a["strides"][1], "dilation_h": a["dilations"][0], "dilation_w": a["dilations"][1],
            "pad_top": a["pads"][0], "pad_left": a["pads"][1], "group": a["group"],
            "offset_group": a["offset_group"]}))


def _bilinear_zeros(image: np.ndarray, hs: np.ndarray, ws: np.ndarray) -> np.ndarray:
    """image [H, W] sampled at float positions; corners outside the image count as 0."""
    height, width = image.shape
    h0, w0 = np.floor(hs), np.floor(ws)
    lh, lw = (hs - h0).astype(np.float32), (ws - w0).astype(np.float32)
    out = np.zeros(hs.shape, np.float32)
    for dh, dw, weight in ((0, 0, (1 - lh) * (1 - lw)), (0, 1, (1 - lh) * lw), (1, 0, lh * (1 - lw)), (1, 1, lh * lw)):
        r, c = h0.astype(np.int64) + dh, w0.astype(np.int64) + dw
        inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
        out += np.where(inside, weight * image[np.clip(r, 0, height - 1), np.clip(c, 0, width - 1)], 0)
    return out
