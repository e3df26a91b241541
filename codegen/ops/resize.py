"""Resize: resample a tensor to a new shape (ONNX Resize and Upsample, TFLite RESIZE_BILINEAR /
RESIZE_NEAREST_NEIGHBOR).

Every axis may be resized. Attributes follow ONNX Resize (opset 19): `sizes` and `scales`
give the output shape and the per-axis scale used by the coordinate transform (the frontend
resolves ONNX's scales/sizes inputs, `axes` and `keep_aspect_ratio_policy` into both, for
every axis); `roi` is (starts.., ends..) for tf_crop_and_resize, else empty.

The interpolation is separable: for each axis and output index, a few input indices with
weights (1 tap for nearest, 2 for linear, 4 for cubic, more with `antialias` when shrinking),
computed at compile time exactly as ONNX's reference does (`axis_taps`). Nearest resizing
copies elements (any dtype, the shared `index_map` kernel); linear and cubic (float32) sum
the weighted taps of every axis (`resample_f32`).
"""

from __future__ import annotations

import math

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.index_map import lower_index_map
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

MODES = ("nearest", "linear", "cubic")
COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                    "asymmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
MAX_DIMS = 4  # axes of the resample kernel's loops


def _coeffs(node, ratio: float, scale: float) -> np.ndarray:
    """The interpolation weights of the taps around one sample (ONNX's reference formulas)."""
    mode, a, antialias = node.attrs["mode"], float(node.attrs["cubic_coeff_a"]), bool(node.attrs["antialias"])
    if mode == "nearest":
        nearest = node.attrs["nearest_mode"]
        if float(ratio).is_integer():
            return np.array([0.0, 1.0])
        low = {"round_prefer_floor": ratio <= 0.5, "round_prefer_ceil": ratio < 0.5, "floor": True,
               "ceil": False}[nearest]
        return np.array([1.0, 0.0]) if low else np.array([0.0, 1.0])
    if mode == "linear":
        if not antialias:
            return np.array([1 - ratio, ratio])
        s = min(scale, 1.0)
        start = int(np.floor(-1 / s) + 1)
        c = np.clip(1 - np.abs((np.arange(start, start + 2 - 2 * start) - ratio) * s), 0, 1)
        return c / c.sum()
    if not antialias:
        r = ratio
        return np.array([((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                         ((a + 2) * r - (a + 3)) * r * r + 1,
                         ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
                         ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a])
    s = min(scale, 1.0)
    i_start = int(np.floor(-2 / s) + 1)

    def cubic(x: float) -> float:
        x = abs(x)
        if x <= 1:
            return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
        return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a if x < 2 else 0.0
    c = np.array([cubic(s * (i - ratio)) for i in range(i_start, 2 - i_start)])
    return c / c.sum()


def _source_coordinates(node, axis: int, in_w: int, out_w: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The input coordinate each output index samples, and whether it lies outside (crop)."""
    mode = node.attrs["coordinate_transformation_mode"]
    y = np.arange(out_w, dtype=np.float64)
    out_real = scale * in_w
    outside = np.zeros(out_w, bool)
    if mode == "align_corners":
        x = np.zeros(out_w) if out_real == 1 else y * (in_w - 1) / (out_real - 1)
    elif mode == "asymmetric":
        x = y / scale
    elif mode == "tf_crop_and_resize":
        roi = [float(v) for v in node.attrs["roi"]]
        rank = len(roi) // 2
        lo, hi = (roi[axis], roi[axis + rank]) if roi else (0.0, 1.0)
        if out_real == 1:
            x = np.full(out_w, (hi - lo) * (in_w - 1) / 2)
        else:
            x = y * (hi - lo) * (in_w - 1) / (out_real - 1)
        x = x + lo * (in_w - 1)
        outside = (x < 0) | (x > in_w - 1)
    elif mode == "pytorch_half_pixel":
        x = np.full(out_w, -0.5) if out_real == 1 else (y + 0.5) / scale - 0.5
    elif mode == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric
        offset = in_w / 2 * (1 - out_w / out_real)
        x = offset + (y + 0.5) / scale - 0.5
    return x, outside


def axis_taps(node, axis: int, in_w: int, out_w: int, scale: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(input index [out_w, taps], weight [out_w, taps], outside [out_w]) along one axis, as
    ONNX's reference computes them (edge-clamped neighbours); None for an untouched axis."""
    roi = [float(v) for v in node.attrs["roi"]]
    rank = len(roi) // 2
    roi_default = not roi or node.attrs["coordinate_transformation_mode"] != "tf_crop_and_resize" or \
        (math.isclose(roi[axis], 0.0) and math.isclose(roi[axis + rank], 1.0))
    if math.isclose(scale, 1.0) and out_w == in_w and roi_default:
        return None
    x, outside = _source_coordinates(node, axis, in_w, out_w, scale)
    floor = np.floor(x)
    ratios = np.where(x == floor, 1.0, x - floor)
    coeffs = np.array([_coeffs(node, float(r), scale) for r in ratios])
    n = coeffs.shape[1]
    pad = int(np.ceil(n / 2))
    xp = x + pad
    p = np.floor(xp).astype(np.int64)
    frac = xp - p
    if n % 2 == 0:
        offset = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        offset = np.where(frac <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    idx = (p + offset)[:, None] + np.arange(n)[None, :] - pad
    if node.attrs["exclude_outside"]:
        coeffs = np.where((idx < 0) | (idx >= in_w), 0.0, coeffs)
        total = coeffs.sum(axis=1, keepdims=True)
        coeffs = coeffs / np.where(total == 0, 1.0, total)
    return np.clip(idx, 0, in_w - 1), coeffs, outside


def _check(node, shape) -> tuple[tuple[int, ...], tuple[float, ...]]:
    sizes = tuple(int(s) for s in node.attrs["sizes"])
    scales = tuple(float(s) for s in node.attrs["scales"])
    rank = len(shape)
    for key, allowed in (("mode", MODES), ("coordinate_transformation_mode", COORDINATE_MODES),
                         ("nearest_mode", NEAREST_MODES)):
        if node.attrs[key] not in allowed:
            raise KilnError(f"Resize {key}='{node.attrs[key]}' is not one of {', '.join(allowed)}", node=node.name)
    if len(sizes) != rank or len(scales) != rank or any(s <= 0 for s in sizes) or any(s <= 0 for s in scales):
        raise KilnError(f"Resize sizes {list(sizes)} and scales {list(scales)} must be positive, one per "
                        f"axis of the rank-{rank} input", node=node.name)
    if node.attrs["roi"] and len(node.attrs["roi"]) != 2 * rank:
        raise KilnError(f"Resize roi must have {2 * rank} values", node=node.name)
    if node.attrs["mode"] == "nearest" and node.attrs["antialias"]:
        raise KilnError("Resize antialias does not apply to mode nearest", node=node.name)
    return sizes, scales


def all_taps(node, shape):
    sizes, scales = _check(node, shape)
    return [axis_taps(node, a, shape[a], sizes[a], scales[a]) for a in range(len(shape))]


def _nearest_picks(taps, shape) -> list[np.ndarray] | None:
    """Per-axis picks of a nearest resize, None when some sample lies outside (crop)."""
    picks = []
    for a, t in enumerate(taps):
        if t is None:
            picks.append(np.arange(shape[a]))
            continue
        idx, w, outside = t
        if outside.any():
            return None
        picks.append(idx[np.arange(idx.shape[0]), np.argmax(w, axis=1)])
    return picks


@register
class Resize(Op):
    name = "Resize"
    kind = OpKind.INJECTIVE
    attributes = {"sizes": (), "scales": (), "roi": (), "mode": "nearest",
                  "coordinate_transformation_mode": "half_pixel", "nearest_mode": "round_prefer_floor",
                  "cubic_coeff_a": -0.75, "exclude_outside": False, "extrapolation_value": 0.0,
                  "antialias": False}
    arity = (1, 1)
    kernels = ("index_map", "resample_f32", "copy")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        sizes, _ = _check(node, x.shape)
        return [(x.dtype, sizes)]

    @classmethod
    def check(cls, node, g):
        x = g.values[node.inputs[0]]
        taps = all_taps(node, x.shape)
        if node.attrs["mode"] != "nearest" or _nearest_picks(taps, x.shape) is None:
            require_dtypes(node, g, ("float32",))
            if len([t for t in _merged_axes(taps, x.shape)]) > MAX_DIMS:
                raise KilnError(f"Resize of a rank-{len(x.shape)} tensor resamples more than {MAX_DIMS} "
                                "axes apart", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        taps = all_taps(node, x.shape)
        if node.attrs["mode"] == "nearest":
            picks = _nearest_picks(taps, x.shape)
            if picks is not None:
                return [np.ascontiguousarray(x[np.ix_(*picks)])]
        y = x.astype(np.float64)
        outside = np.zeros(g.values[node.outputs[0]].shape, bool)
        for axis, t in enumerate(taps):
            if t is None:
                continue
            idx, w, out_mask = t
            shape = [1] * x.ndim
            shape[axis] = -1
            y = sum(np.take(y, idx[:, k], axis=axis) * w[:, k].reshape(shape) for k in range(idx.shape[1]))
            outside |= out_mask.reshape(shape)
        y = np.where(outside, float(node.attrs["extrapolation_value"]), y)
        return [y.astype(x.dtype)]

    @classmethod
    def lower(cls, node, ctx):
        x, out = node.inputs[0], node.outputs[0]
        shape = ctx.g.values[x].shape
        taps = all_taps(node, shape)
        picks = _nearest_picks(taps, shape) if node.attrs["mode"] == "nearest" else None
        if picks is not None:
            lower_index_map(node, ctx, x, out, picks)
            return
        axes = _merged_axes(taps, shape)
        pad = [(1, 1, np.zeros((1, 1), np.int64), np.ones((1, 1)), np.zeros(1, bool))] * (MAX_DIMS - len(axes))
        axes = pad + axes
        index, weight, starts, at = [], [], [], 0
        for _, stride, idx, w, outside in axes:
            starts.append(at)
            idx = np.where(outside[:, None], -1, idx * stride)
            index.append(idx.reshape(-1))
            weight.append(w.reshape(-1))
            at += idx.size
        params = {"dims": tuple(a[2].shape[0] for a in axes), "taps": tuple(a[2].shape[1] for a in axes),
                  "start": tuple(starts),
                  "index": ctx.constant(node, "index", np.concatenate(index), "int32"),
                  "weight": ctx.constant(node, "weight", np.concatenate(weight), "float32"),
                  "extrapolation": float(node.attrs["extrapolation_value"])}
        ctx.request(KernelRequest("resample_f32", node, params, (ctx.tensor(x), ctx.tensor(out))))


def _merged_axes(taps, shape) -> list[tuple]:
    """(size, input element stride, index [out, taps], weight, outside) per loop of the
    resample kernel: untouched axes next to each other merge into one plain loop."""
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    loops: list[list] = []
    for a, t in enumerate(taps):
        if t is None:
            if shape[a] == 1:
                continue
            if loops and loops[-1][5] and loops[-1][1] == strides[a] * shape[a]:
                loops[-1][0] *= shape[a]
                loops[-1][1] = strides[a]
                continue
            loops.append([shape[a], strides[a], None, None, None, True])
        else:
            loops.append([t[0].shape[0], strides[a], *t, False])
    result = []
    for size, stride, idx, w, outside, plain in loops:
        if plain:
            idx, w, outside = np.arange(size)[:, None], np.ones((size, 1)), np.zeros(size, bool)
        result.append((size, stride, idx, w, outside))
    return result
