"""RoiAlign: each region of interest of an NCHW feature map resampled to a fixed grid
(ONNX RoiAlign, opset 10 and 16 semantics, as onnxruntime and ONNX's reference compute it).

Per ROI (x1, y1, x2, y2 scaled by `spatial_scale`, minus 0.5 with half_pixel), each output
bin averages (or takes the max of) `sampling_ratio`² bilinear samples — ceil(roi size / output
size) per axis when sampling_ratio is 0, so the sample count is decided per ROI at run time.
A sample more than one pixel outside the map contributes 0. Max mode takes, per sample, the
largest of its four weighted corners (onnxruntime's definition) and the max over samples.
"""

from __future__ import annotations

import math

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


@register
class RoiAlign(Op):
    name = "RoiAlign"
    kind = OpKind.OPAQUE
    attributes = {"mode": "avg", "output_height": 1, "output_width": 1, "sampling_ratio": 0,
                  "spatial_scale": 1.0, "half_pixel": True}
    arity = (3, 3)
    kernels = ("roi_align_f32",)

    @classmethod
    def infer(cls, node, ins):
        x, rois, idx = ins
        if len(x.shape) != 4 or len(rois.shape) != 2 or rois.shape[1] != 4 or idx.shape != rois.shape[:1]:
            raise KilnError(f"RoiAlign needs X [N,C,H,W], rois [R,4] and batch_indices [R], got {list(x.shape)}, "
                            f"{list(rois.shape)}, {list(idx.shape)}", node=node.name)
        if node.attrs["mode"] not in ("avg", "max"):
            raise KilnError(f"RoiAlign mode '{node.attrs['mode']}' is not avg or max", node=node.name)
        return [(x.dtype, (rois.shape[0], x.shape[1], int(node.attrs["output_height"]),
                           int(node.attrs["output_width"])))]

    @classmethod
    def check(cls, node, g):
        dtypes = [g.values[i].dtype for i in node.inputs]
        if dtypes != ["float32", "float32", "int64"]:
            raise KilnError(f"RoiAlign on {', '.join(dtypes)} is not supported (float32, float32, int64)",
                            node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        x, rois, idx = args
        a = node.attrs
        out_h, out_w = int(a["output_height"]), int(a["output_width"])
        y = np.zeros((rois.shape[0], x.shape[1], out_h, out_w), np.float32)
        for r in range(rois.shape[0]):
            b = int(idx[r])
            if 0 <= b < x.shape[0]:
                y[r] = _roi(x[b].astype(np.float32), rois[r].astype(np.float32), a, out_h, out_w)
        return [y]

    @classmethod
    def lower(cls, node, ctx):
        x = ctx.g.values[node.inputs[0]]
        a = node.attrs
        ctx.request(KernelRequest("roi_align_f32", node, {
            "rois": ctx.g.values[node.inputs[1]].shape[0], "batch": x.shape[0], "channels": x.shape[1],
            "height": x.shape[2], "width": x.shape[3], "out_h": int(a["output_height"]),
            "out_w": int(a["output_width"]), "sampling_ratio": int(a["sampling_ratio"]),
            "spatial_scale": float(a["spatial_scale"]), "offset": 0.5 if a["half_pixel"] else 0.0,
            "max_mode": a["mode"] == "max"}, tuple(ctx.tensor(i) for i in (*node.inputs, node.outputs[0]))))


def _roi(x: np.ndarray, roi: np.ndarray, a: dict, out_h: int, out_w: int) -> np.ndarray:
    """One ROI of one image x [C, H, W]: [C, out_h, out_w]."""
    f32 = np.float32
    height, width = x.shape[1:]
    scale, offset = f32(a["spatial_scale"]), f32(0.5 if a["half_pixel"] else 0.0)
    x0, y0, x1, y1 = (f32(v) * scale - offset for v in roi)
    roi_w, roi_h = x1 - x0, y1 - y0
    if not a["half_pixel"]:
        roi_w, roi_h = max(roi_w, f32(1)), max(roi_h, f32(1))
    bin_h, bin_w = f32(roi_h / f32(out_h)), f32(roi_w / f32(out_w))
    ratio = int(a["sampling_ratio"])
    grid_h = ratio if ratio > 0 else int(math.ceil(roi_h / f32(out_h)))
    grid_w = ratio if ratio > 0 else int(math.ceil(roi_w / f32(out_w)))
    count = f32(max(grid_h * grid_w, 1))
    out = np.zeros((x.shape[0], out_h, out_w), np.float32)
    for ph in range(out_h):
        for pw in range(out_w):
            samples = [_bilinear(x, y0 + f32(ph) * bin_h + (f32(iy) + f32(0.5)) * bin_h / f32(grid_h),
                                 x0 + f32(pw) * bin_w + (f32(ix) + f32(0.5)) * bin_w / f32(grid_w), height, width)
                       for iy in range(grid_h) for ix in range(grid_w)]
            if a["mode"] == "avg":
                out[:, ph, pw] = np.sum([s.sum(axis=0) for s in samples], axis=0) / count if samples else 0
            elif samples:
                out[:, ph, pw] = np.max([s.max(axis=0) for s in samples], axis=0)
    return out


def _bilinear(x: np.ndarray, y: np.float32, xx: np.float32, height: int, width: int) -> np.ndarray:
    """The four weighted corner values [4, C] of a sample (all 0 outside the map)."""
    if y < -1.0 or y > height or xx < -1.0 or xx > width:
        return np.zeros((4, x.shape[0]), np.float32)
    y, xx = max(y, np.float32(0)), max(xx, np.float32(0))
    y_lo, x_lo = int(y), int(xx)
    if y_lo >= height - 1:
        y_lo = y_hi = height - 1
        y = np.float32(y_lo)
    else:
        y_hi = y_lo + 1
    if x_lo >= width - 1:
        x_lo = x_hi = width - 1
        xx = np.float32(x_lo)
    else:
        x_hi = x_lo + 1
    ly, lx = np.float32(y - y_lo), np.float32(xx - x_lo)
    hy, hx = np.float32(1) - ly, np.float32(1) - lx
    return np.stack([hy * hx * x[:, y_lo, x_lo], hy * lx * x[:, y_lo, x_hi],
                     ly * hx * x[:, y_hi, x_lo], ly * lx * x[:, y_hi, x_hi]]).astype(np.float32)
