"""Spatial ops: Conv (plain, depthwise, grouped), ConvTranspose, MaxPool, AveragePool, global
pools, BatchNormalization, Resize and Upsample.

ONNX is NCHW, Kiln's spatial ops are NHWC: each op becomes Transpose(0,2,3,1) → NHWC op →
Transpose(0,3,1,2), with weights repacked at import time (a later pass cancels the pairs of
transposes between consecutive spatial ops). 1-D ops (rank-3 input) run as 2-D ops with a
height of 1. `auto_pad` is resolved to explicit (top, left, bottom, right) pads here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_elementwise import cast_to
from codegen.frontends.onnx.ops_pool_nd import convert_pool_nd, needs_pool_nd, same_pads
from codegen.frontends.onnx.reader import OnnxNode


@dataclass(frozen=True)
class Window:
    """A 2-D sliding window in Kiln's attribute form."""

    kernel: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pads: tuple[int, int, int, int]  # top, left, bottom, right


def _ints(node: OnnxNode, key: str, default: list[int], count: int, minimum: int) -> list[int]:
    values = [int(v) for v in node.attr(key, default)]
    if len(values) != count or any(v < minimum for v in values):
        raise node.error(f"attribute '{key}' = {values} must have {count} values >= {minimum}")
    return values


def window(node: OnnxNode, spatial: tuple[int, ...], kernel: list[int]) -> Window:
    """Kernel, strides, dilations and explicit pads for 1-D or 2-D spatial dims."""
    r = len(spatial)
    kernel = [int(k) for k in kernel]
    if len(kernel) != r or any(k < 1 for k in kernel):
        raise node.error(f"kernel_shape {kernel} does not fit {r} spatial dimension(s)")
    strides = _ints(node, "strides", [1] * r, r, 1)
    dilations = _ints(node, "dilations", [1] * r, r, 1)
    auto_pad = node.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad == "NOTSET":
        pads = _ints(node, "pads", [0] * 2 * r, 2 * r, 0)
    elif auto_pad == "VALID":
        pads = [0] * 2 * r
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = same_pads(auto_pad, spatial, kernel, strides, dilations)
    else:
        raise node.error(f"auto_pad '{auto_pad}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    if r == 1:
        return Window((1, kernel[0]), (1, strides[0]), (1, dilations[0]), (0, pads[0], 0, pads[1]))
    return Window(tuple(kernel), tuple(strides), tuple(dilations), (pads[0], pads[1], pads[2], pads[3]))


def spatial_shape(ctx: ConvertContext, node: OnnxNode) -> tuple[int, ...]:
    shape = ctx.shape(node.input(0))
    if len(shape) not in (3, 4):
        raise node.error(f"input must be NCL or NCHW (rank 3 or 4), got shape {list(shape)}")
    return shape


def to_nhwc(ctx: ConvertContext, node: OnnxNode) -> str:
    """The node's NCHW (or NCL) input as a Kiln NHWC value."""
    shape = ctx.shape(node.input(0))
    x = ctx.kiln(node.input(0))
    if len(shape) == 3:
        x = ctx.add(node, "Reshape", [x], role="to_2d", shape=(shape[0], shape[1], 1, shape[2]))
    return ctx.add(node, "Transpose", [x], role="to_nhwc", perm=(0, 2, 3, 1))


def from_nhwc(ctx: ConvertContext, node: OnnxNode, y: str, rank: int) -> None:
    """Bind the node's output to the NHWC result `y`, transposed back to NCHW (or NCL)."""
    out = node.outputs[0]
    if rank == 4:
        ctx.add(node, "Transpose", [y], role="to_nchw", out=out, perm=(0, 3, 1, 2))
        return
    t = ctx.add(node, "Transpose", [y], role="to_nchw", perm=(0, 3, 1, 2))
    n, c, _, length = ctx.b.g.values[t].shape
    ctx.add(node, "Reshape", [t], role="to_1d", out=out, shape=(n, c, length))


@converter("Conv")
def convert_conv(ctx, node):
    """Conv2D (weights OIHW → OHWI), DepthwiseConv2D when group == C_in ([1,KH,KW,C·M]), else
    GroupConv2D (OHWI per group)."""
    shape = spatial_shape(ctx, node)
    w = ctx.computed_const(node.input(1))
    if w is None or w.dtype != np.float32:
        raise node.error("weights (input 1) must be a float32 constant")
    if w.ndim != len(shape):
        raise node.error(f"weights of shape {list(w.shape)} do not fit input {list(shape)}")
    kernel = [int(k) for k in node.attr("kernel_shape", w.shape[2:])]
    if tuple(kernel) != tuple(w.shape[2:]):
        raise node.error(f"kernel_shape {kernel} differs from the weights' {list(w.shape[2:])}")
    win = window(node, shape[2:], kernel)
    if w.ndim == 3:
        w = w[:, :, None, :]
    c_in, m, group = shape[1], w.shape[0], int(node.attr("group", 1))
    if group == 1 and w.shape[1] == c_in:
        op, weights, extra = "Conv2D", w.transpose(0, 2, 3, 1), {}
    elif group == c_in and w.shape[1] == 1 and m % c_in == 0:
        op, weights, extra = "DepthwiseConv2D", w.transpose(1, 2, 3, 0), {"depth_multiplier": m // c_in}
    elif group > 1 and c_in % group == 0 and m % group == 0 and w.shape[1] * group == c_in:
        op, weights, extra = "GroupConv2D", w.transpose(0, 2, 3, 1), {"groups": group}
    else:
        raise node.error(f"weights of shape {list(w.shape)} do not fit {c_in} input channels, group={group}")
    ins = [to_nhwc(ctx, node), ctx.weight(node, "weight", np.ascontiguousarray(weights))]
    if node.input(2):
        ins.append(ctx.kiln(node.input(2)))
    y = ctx.add(node, op, ins, strides=win.strides, dilations=win.dilations, pads=win.pads, **extra)
    from_nhwc(ctx, node, y, len(shape))


def _ceil_extra(node: OnnxNode, spatial: tuple[int, ...], win: Window) -> tuple[int, int]:
    """End padding (rows, columns) that makes the floor output size the ceil_mode one: the
    extra taps lie in the padding, which pooling skips (and averages do not count). A last
    window that would start in the end padding is dropped, as ONNX and PyTorch do."""
    if not node.attr("ceil_mode", 0):
        return 0, 0
    extra = []
    for i, size in enumerate(spatial if len(spatial) == 2 else (1, spatial[0])):
        k, s, d = win.kernel[i], win.strides[i], win.dilations[i]
        padded = size + win.pads[i] + win.pads[i + 2]
        span = padded - ((k - 1) * d + 1)
        floor_out, ceil_out = span // s + 1, -(-span // s) + 1
        if (ceil_out - 1) * s >= size + win.pads[i]:
            ceil_out -= 1
        extra.append(max((ceil_out - 1) * s + (k - 1) * d + 1 - padded, 0) if ceil_out > floor_out else 0)
    return extra[0], extra[1]


def _pool_input(ctx: ConvertContext, node: OnnxNode, win: Window, include_pad: bool) -> tuple[str, tuple]:
    """The NHWC input and the pool's pads: with count_include_pad the padding becomes real
    zeros (a Pad node), so that the average counts it."""
    x = to_nhwc(ctx, node)
    top, left, bottom, right = win.pads
    if include_pad and any(win.pads):
        x = ctx.add(node, "Pad", [x], role="include_pad", pads=(0, top, left, 0, 0, bottom, right, 0), value=0.0)
        top = left = bottom = right = 0
    return x, (top, left, bottom, right)


def _pool(ctx: ConvertContext, node: OnnxNode, op: str) -> None:
    if needs_pool_nd(ctx, node):  # 3-D, dilated, with indices: channels-first PoolND
        return convert_pool_nd(ctx, node)
    shape = spatial_shape(ctx, node)
    if node.attr("kernel_shape") is None:
        raise node.error("attribute 'kernel_shape' is missing")
    win = window(node, shape[2:], node.attr("kernel_shape"))
    if win.dilations != (1, 1):
        raise node.error(f"dilations {list(win.dilations)} are not supported for pooling")
    extra_h, extra_w = _ceil_extra(node, shape[2:], win)
    include = op == "AveragePool2D" and bool(node.attr("count_include_pad", 0))
    x, (top, left, bottom, right) = _pool_input(ctx, node, win, include)
    y = ctx.add(node, op, [x], kernel=win.kernel, strides=win.strides,
                pads=(top, left, bottom + extra_h, right + extra_w))
    from_nhwc(ctx, node, y, len(shape))


@converter("LpPool")
def convert_lppool(ctx, node):
    """(sum over the window of |x|^p)^(1/p): Abs, Pow, the window's average over real zeros
    in the padding times its size, Pow(1/p)."""
    if needs_pool_nd(ctx, node):
        return convert_pool_nd(ctx, node)
    shape = spatial_shape(ctx, node)
    win = window(node, shape[2:], node.attr("kernel_shape"))
    if win.dilations != (1, 1) or node.attr("ceil_mode", 0):
        raise node.error("dilations and ceil_mode are not supported for LpPool")
    p = float(node.attr("p", 2))
    x, pads = _pool_input(ctx, node, win, True)
    powered = ctx.add(node, "Pow", [ctx.add(node, "Abs", [x], role="abs"),
                                    ctx.weight(node, "p", np.array(p, np.float32))], role="pow")
    avg = ctx.add(node, "AveragePool2D", [powered], role="avg", kernel=win.kernel, strides=win.strides, pads=pads)
    total = ctx.add(node, "Mul", [avg, ctx.weight(node, "size", np.array(win.kernel[0] * win.kernel[1], np.float32))],
                    role="sum")
    y = ctx.add(node, "Pow", [total, ctx.weight(node, "inv_p", np.array(1.0 / p, np.float32))], role="root")
    from_nhwc(ctx, node, y, len(shape))


@converter("GlobalLpPool")
def convert_global_lppool(ctx, node):
    rank = len(ctx.shape(node.input(0)))
    p = float(node.attr("p", 2))
    x = ctx.kiln(node.input(0))
    powered = ctx.add(node, "Pow", [ctx.add(node, "Abs", [x], role="abs"),
                                    ctx.weight(node, "p", np.array(p, np.float32))], role="pow")
    total = ctx.add(node, "ReduceSum", [powered], role="sum", axes=tuple(range(2, rank)), keepdims=True)
    ctx.add(node, "Pow", [total, ctx.weight(node, "inv_p", np.array(1.0 / p, np.float32))], out=node.outputs[0])


# Integer types whose every value float32 holds exactly (int8 has its own pooling kernels).
EXACT_IN_FLOAT32 = ("uint8", "int16", "uint16")


def in_float32(ctx: ConvertContext, node: OnnxNode, convert: Callable[[ConvertContext, OnnxNode], None]) -> None:
    """`convert` applied to a float32 copy of input 0, its result cast back to input 0's type:
    exact for ops that only select among their inputs' values (MaxPool) on EXACT_IN_FLOAT32."""
    x = ctx.fresh(f"{node.name}_in_float32")
    ctx.bind(x, ctx.add(node, "Cast", [ctx.kiln(node.input(0))], role="in_float32", to="float32"))
    y = ctx.fresh(f"{node.name}_out_float32")
    convert(ctx, OnnxNode(node.op_type, f"{node.name}_float32", [x, *node.inputs[1:]], [y], dict(node.attrs)))
    cast_to(ctx, node, y, ctx.onnx_dtype(node.input(0)))


@converter("MaxPool")
def convert_maxpool(ctx, node):
    if ctx.dtype(node.input(0)) in EXACT_IN_FLOAT32 and len([o for o in node.outputs if o]) == 1:
        in_float32(ctx, node, lambda c, n: _pool(c, n, "MaxPool2D"))
        return
    _pool(ctx, node, "MaxPool2D")


@converter("AveragePool")
def convert_avgpool(ctx, node):
    _pool(ctx, node, "AveragePool2D")


@converter("GlobalAveragePool")
def convert_global_avgpool(ctx, node):
    """A mean over the spatial axes, directly on NCHW (no transposes needed)."""
    rank = len(ctx.shape(node.input(0)))
    if rank < 3:
        raise node.error(f"input must have spatial dimensions, got rank {rank}")
    ctx.add(node, "Mean", [ctx.kiln(node.input(0))], out=node.outputs[0],
            axes=tuple(range(2, rank)), keepdims=True)


@converter("GlobalMaxPool")
def convert_global_maxpool(ctx, node):
    """A MaxPool2D whose window is the whole image."""
    shape = spatial_shape(ctx, node)
    kernel = (shape[2], shape[3]) if len(shape) == 4 else (1, shape[2])
    y = ctx.add(node, "MaxPool2D", [to_nhwc(ctx, node)], kernel=kernel, strides=(1, 1), pads=(0, 0, 0, 0))
    from_nhwc(ctx, node, y, len(shape))


@converter("BatchNormalization")
def convert_batchnorm(ctx, node):
    """Inference-mode batch normalisation over axis 1 (the running statistics are inputs);
    training_mode=1 normalises with the batch's own statistics (composed of Kiln ops)."""
    if not node.attr("spatial", 1):
        raise node.error("spatial=0 is not supported")
    if len(ctx.shape(node.input(0))) < 2:
        raise node.error("input must have a channel axis (rank >= 2)")
    if any(not node.input(i) for i in range(5)):
        raise node.error("needs all five inputs X, scale, B, input_mean, input_var")
    if node.attr("training_mode", 0):
        _batchnorm_training(ctx, node)
        return
    ctx.add(node, "BatchNorm", [ctx.kiln(i) for i in node.inputs[:5]], out=node.outputs[0],
            epsilon=float(node.attr("epsilon", 1e-5)), axis=1)


def _batchnorm_training(ctx: ConvertContext, node: OnnxNode) -> None:
    """y = scale * (x - mean_b) / sqrt(var_b + epsilon) + B with the batch mean and (biased)
    variance over every axis but 1; the running statistics come out updated with `momentum`."""
    shape = ctx.shape(node.input(0))
    axes = tuple(a for a in range(len(shape)) if a != 1)
    per_channel = (shape[1],) + (1,) * (len(shape) - 2)
    params = []
    for i, role in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "var")):
        data = ctx.require_const(node, i, role).astype(np.float32)
        params.append(data)
    scale, bias, run_mean, run_var = params
    eps, momentum = float(node.attr("epsilon", 1e-5)), float(node.attr("momentum", 0.9))
    x = ctx.kiln(node.input(0))
    mean = ctx.add(node, "Mean", [x], role="batch_mean", axes=axes, keepdims=True)
    d = ctx.add(node, "Sub", [x, mean], role="centred")
    var = ctx.add(node, "Mean", [ctx.add(node, "Mul", [d, d], role="square")], role="batch_var", axes=axes,
                  keepdims=True)
    std = ctx.add(node, "Sqrt", [ctx.add(node, "Add", [var, ctx.weight(node, "epsilon", np.array(eps, np.float32))],
                                         role="var_eps")], role="std")
    scaled = ctx.add(node, "Mul", [ctx.weight(node, "scale", scale.reshape(per_channel)), d], role="scaled")
    y = ctx.add(node, "Div", [scaled, std], role="normed")
    ctx.add(node, "Add", [y, ctx.weight(node, "bias", bias.reshape(per_channel))], out=node.outputs[0])
    for k, (stat, running) in enumerate(((mean, run_mean), (var, run_var)), start=1):
        if len(node.outputs) > k and node.outputs[k]:
            flat = ctx.add(node, "Reshape", [stat], role=f"stat{k}", shape=(shape[1],))
            keep = ctx.weight(node, f"running{k}", (running * np.float32(momentum)).astype(np.float32))
            new = ctx.add(node, "Mul", [flat, ctx.weight(node, f"rate{k}", np.array(1 - momentum, np.float32))],
                          role=f"new{k}")
            ctx.add(node, "Add", [keep, new], out=node.outputs[k])


def _resize_attrs(ctx: ConvertContext, node: OnnxNode, shape: tuple[int, ...]) -> dict:
    """Kiln Resize attributes for every axis, from Resize's inputs (opset 10: X, scales;
    11+: X, roi, scales, sizes) and attributes (`axes`, `keep_aspect_ratio_policy` from 18),
    computed as ONNX's reference computes the output size and the per-axis scale."""
    rank = len(shape)
    if ctx.opset < 11:
        roi, scales, sizes = None, ctx.require_const(node, 1, "scales"), None
    else:
        roi = ctx.const(node.input(1)) if node.input(1) else None
        if node.input(1) and roi is None:
            raise node.error("roi (input 1) must be a constant")
        scales = ctx.const(node.input(2)) if node.input(2) else None
        sizes = ctx.const(node.input(3)) if node.input(3) else None
        if (node.input(2) and scales is None) or (node.input(3) and sizes is None):
            raise node.error("scales and sizes must be constants")
    scales = None if scales is None or scales.size == 0 else [float(v) for v in scales.reshape(-1)]
    sizes = None if sizes is None or sizes.size == 0 else [int(v) for v in sizes.reshape(-1)]
    roi = None if roi is None or roi.size == 0 else [float(v) for v in roi.reshape(-1)]
    if (scales is None) == (sizes is None):
        raise node.error("exactly one of scales and sizes must be given")
    axes = [int(a) % rank for a in node.attr("axes", list(range(rank)))]
    given = scales if scales is not None else sizes
    if len(given) != len(axes):
        raise node.error(f"{len(given)} scales/sizes for {len(axes)} axes")
    full_scale, full_size = [1.0] * rank, list(shape)
    if sizes is not None:
        for a, s in zip(axes, sizes):
            full_size[a], full_scale[a] = s, s / shape[a]
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            ratios = [full_scale[a] for a in axes]
            scale = min(ratios) if policy == "not_larger" else max(ratios)
            for a in axes:
                full_scale[a], full_size[a] = scale, int(scale * shape[a] + 0.5)
    else:
        for a, s in zip(axes, scales):
            full_scale[a] = float(np.float32(s))
        full_size = [int(v) for v in (np.array(full_scale, np.float32) * np.array(shape)).astype(np.int64)]
    full_roi: list[float] = []
    if roi is not None:
        full_roi = [0.0] * rank + [1.0] * rank
        n = len(axes)
        if len(roi) != 2 * n:
            raise node.error(f"roi has {len(roi)} values, expected {2 * n}")
        for k, a in enumerate(axes):
            full_roi[a], full_roi[a + rank] = roi[k], roi[k + n]
    default_coords = "asymmetric" if ctx.opset < 11 else "half_pixel"
    return {"sizes": tuple(full_size), "scales": tuple(full_scale), "roi": tuple(full_roi),
            "mode": node.attr("mode", "nearest"),
            "coordinate_transformation_mode": node.attr("coordinate_transformation_mode", default_coords),
            "nearest_mode": node.attr("nearest_mode", "round_prefer_floor" if ctx.opset >= 11 else "floor"),
            "cubic_coeff_a": float(node.attr("cubic_coeff_a", -0.75)),
            "exclude_outside": bool(node.attr("exclude_outside", 0)),
            "extrapolation_value": float(node.attr("extrapolation_value", 0.0)),
            "antialias": bool(node.attr("antialias", 0))}


@converter("Resize")
def convert_resize(ctx, node):
    """Any axes, directly on the ONNX layout (Kiln's Resize is not tied to NHWC)."""
    shape = ctx.shape(node.input(0))
    ctx.add(node, "Resize", [ctx.kiln(node.input(0))], out=node.outputs[0], **_resize_attrs(ctx, node, shape))


@converter("Upsample")
def convert_upsample(ctx, node):
    """Upsample (opsets 7-9): Resize with asymmetric coordinates (nearest: floor)."""
    shape = ctx.shape(node.input(0))
    scales = node.attr("scales") if node.input(1) == "" else ctx.require_const(node, 1, "scales").reshape(-1)
    if scales is None or len(scales) != len(shape):
        raise node.error(f"scales must give one factor per axis of the rank-{len(shape)} input")
    full_scale = [float(np.float32(s)) for s in scales]
    sizes = [int(v) for v in (np.array(full_scale, np.float32) * np.array(shape)).astype(np.int64)]
    mode = node.attr("mode", "nearest")
    ctx.add(node, "Resize", [ctx.kiln(node.input(0))], out=node.outputs[0], sizes=tuple(sizes),
            scales=tuple(full_scale), mode="linear" if mode in ("linear", "bilinear") else mode,
            coordinate_transformation_mode="asymmetric", nearest_mode="floor")


@converter("ConvTranspose")
def convert_conv_transpose(ctx, node):
    """ConvTranspose2D with weights [C, O/group, KH, KW] repacked to [O, KH, KW, C/group];
    output_padding, output_shape and auto_pad become (possibly negative) crop pads, as ONNX's
    reference computes them. Beyond 2-D: _conv_transpose_nd."""
    shape = ctx.shape(node.input(0))
    if len(shape) < 3:
        raise node.error(f"input must be [N, C, spatial...] (rank 3 or more), got shape {list(shape)}")
    w = ctx.computed_const(node.input(1))
    if w is None or w.dtype != np.float32 or w.ndim != len(shape):
        raise node.error("weights (input 1) must be a float32 constant of the input's rank")
    r = len(shape) - 2
    group = int(node.attr("group", 1))
    c, og = w.shape[0], w.shape[1]
    if c != shape[1] or c % group:
        raise node.error(f"weights {list(w.shape)} do not fit {shape[1]} input channels in {group} groups")
    kernel = [int(k) for k in w.shape[2:]]
    strides = [int(v) for v in node.attr("strides", [1] * r)]
    dilations = [int(v) for v in node.attr("dilations", [1] * r)]
    out_pad = [int(v) for v in node.attr("output_padding", [0] * r)]
    full = [strides[i] * (shape[2 + i] - 1) + (kernel[i] - 1) * dilations[i] + 1 for i in range(r)]
    auto_pad = node.attr("auto_pad", "NOTSET")
    out_shape = node.attr("output_shape")
    pads = node.attr("pads")
    if out_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = [int(v) for v in out_shape] if out_shape is not None else [shape[2 + i] * strides[i] for i in range(r)]
        target = target[-r:]
        total = [full[i] + out_pad[i] - target[i] for i in range(r)]
        first = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
        begins, ends = first, [full[i] - first[i] - target[i] for i in range(r)]
    else:
        pads = [int(v) for v in (pads or [0] * (2 * r))]
        begins, ends = pads[:r], [pads[r + i] - out_pad[i] for i in range(r)]
    if r > 2:
        _conv_transpose_nd(ctx, node, shape, w, group, strides, dilations, begins, ends)
        return
    if r == 1:
        w = w[:, :, None, :]
        strides, dilations, begins, ends = [1] + strides, [1] + dilations, [0] + begins, [0] + ends
    kh, kw = w.shape[2], w.shape[3]
    cg = c // group
    weights = w.reshape(group, cg, og, kh, kw).transpose(0, 2, 3, 4, 1).reshape(group * og, kh, kw, cg)
    ins = [to_nhwc(ctx, node), ctx.weight(node, "weight", np.ascontiguousarray(weights))]
    if node.input(2):
        ins.append(ctx.kiln(node.input(2)))
    y = ctx.add(node, "ConvTranspose2D", ins, strides=tuple(strides), dilations=tuple(dilations),
                pads=(begins[0], begins[1], ends[0], ends[1]), groups=group)
    from_nhwc(ctx, node, y, len(shape))


def _conv_transpose_nd(ctx, node, shape, w, group, strides, dilations, begins, ends):
    """ConvTranspose beyond 2-D (volumes): every input position times the whole kernel, one
    MatMul [O * prod(k), C] x [N, C, L], then each column block summed into its place of the
    output (sum_blocks, as Col2Im). Groups as a block-diagonal weight matrix."""
    from codegen.frontends.onnx.ops_gather import sum_blocks

    n, c, spatial = shape[0], shape[1], list(shape[2:])
    og, kernel = w.shape[1], list(w.shape[2:])
    taps, cg = int(np.prod(kernel)), c // group
    columns_w = np.zeros((group * og * taps, c), np.float32)
    for g in range(group):
        block = w[g * cg:(g + 1) * cg].reshape(cg, og * taps).T  # [og * taps, cg]
        columns_w[g * og * taps:(g + 1) * og * taps, g * cg:(g + 1) * cg] = block
    length = int(np.prod(spatial))
    x = ctx.add(node, "Reshape", [ctx.kiln(node.input(0))], role="positions", shape=(n, c, length))
    cols = ctx.add(node, "MatMul", [ctx.weight(node, "columns_weight", columns_w), x], role="columns")
    full = [strides[i] * (spatial[i] - 1) + (kernel[i] - 1) * dilations[i] + 1 for i in range(len(spatial))]
    image = [full[i] - begins[i] - ends[i] for i in range(len(spatial))]
    out = None if node.input(2) else node.outputs[0]
    y = sum_blocks(ctx, node, cols, (n, group * og), image, spatial, kernel, strides, begins, dilations, out=out)
    if node.input(2):
        bias = ctx.computed_const(node.input(2))
        if bias is None:
            raise node.error("bias (input 2) must be a constant")
        per_channel = ctx.weight(node, "bias", bias.astype(np.float32).reshape(-1, *[1] * len(spatial)))
        ctx.add(node, "Add", [y, per_channel], out=node.outputs[0])


@converter("LRN")
def convert_lrn(ctx, node):
    """x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta: alpha
    times the mean of x^2 over the channel window, an average pool (padding counted as
    zeros) over the channel axis viewed as image rows."""
    shape = ctx.shape(node.input(0))
    if len(shape) < 3:
        raise node.error(f"input must be [N, C, ...], got {list(shape)}")
    size = int(node.attr("size"))
    alpha, beta, bias = float(node.attr("alpha", 1e-4)), float(node.attr("beta", 0.75)), float(node.attr("bias", 1.0))
    n, c = shape[0], shape[1]
    rest = int(np.prod(shape[2:], dtype=np.int64))
    x = ctx.kiln(node.input(0))
    sq = ctx.add(node, "Mul", [x, x], role="square")
    # [N, C, rest] as NHWC [N, C, rest, 1]: the channel axis is the image height
    rows = ctx.add(node, "Reshape", [sq], role="channels_as_rows", shape=(n, c, rest, 1))
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    padded = ctx.add(node, "Pad", [rows], role="zero_channels", pads=(0, before, 0, 0, 0, after, 0, 0), value=0.0)
    avg = ctx.add(node, "AveragePool2D", [padded], role="window", kernel=(size, 1), strides=(1, 1), pads=(0, 0, 0, 0))
    mean = ctx.add(node, "Reshape", [avg], role="window_mean", shape=tuple(shape))
    k = ctx.add(node, "Mul", [mean, ctx.weight(node, "alpha", np.array(alpha, np.float32))], role="scaled")
    base = ctx.add(node, "Add", [k, ctx.weight(node, "bias", np.array(bias, np.float32))], role="base")
    den = ctx.add(node, "Pow", [base, ctx.weight(node, "beta", np.array(beta, np.float32))], role="denominator")
    ctx.add(node, "Div", [x, den], out=node.outputs[0])
