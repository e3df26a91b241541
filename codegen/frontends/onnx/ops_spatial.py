"""Spatial ops: Conv, MaxPool, AveragePool, global pools and BatchNormalization.

ONNX is NCHW, Kiln's spatial ops are NHWC: each op becomes Transpose(0,2,3,1) → NHWC op →
Transpose(0,3,1,2), with weights repacked at import time (a later pass cancels the pairs of
transposes between consecutive spatial ops). 1-D ops (rank-3 input) run as 2-D ops with a
height of 1. `auto_pad` is resolved to explicit (top, left, bottom, right) pads here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
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
        begins, ends = [], []
        for size, k, s, d in zip(spatial, kernel, strides, dilations):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            small = total // 2
            begins.append(small if auto_pad == "SAME_UPPER" else total - small)
            ends.append(total - begins[-1])
        pads = begins + ends
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
    """Conv2D (weights OIHW → OHWI) or, when group == C_in, DepthwiseConv2D ([1,KH,KW,C·M])."""
    shape = spatial_shape(ctx, node)
    w = ctx.const(node.input(1))
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
    elif group != 1 and group != c_in:
        raise node.error(f"grouped Conv with group={group} not supported")
    else:
        raise node.error(f"weights of shape {list(w.shape)} do not fit {c_in} input channels, group={group}")
    ins = [to_nhwc(ctx, node), ctx.weight(node, "weight", np.ascontiguousarray(weights))]
    if node.input(2):
        ins.append(ctx.kiln(node.input(2)))
    y = ctx.add(node, op, ins, strides=win.strides, dilations=win.dilations, pads=win.pads, **extra)
    from_nhwc(ctx, node, y, len(shape))


def _check_ceil_mode(node: OnnxNode, spatial: tuple[int, ...], win: Window) -> None:
    """ceil_mode=1 is accepted only where it gives the same output size as floor."""
    if not node.attr("ceil_mode", 0):
        return
    pads = win.pads
    for i, size in enumerate(spatial if len(spatial) == 2 else (1, spatial[0])):
        k, s, d = win.kernel[i], win.strides[i], win.dilations[i]
        span = size + pads[i] + pads[i + 2] - ((k - 1) * d + 1)
        floor_out, ceil_out = span // s + 1, -(-span // s) + 1
        if (ceil_out - 1) * s >= size + pads[i]:
            ceil_out -= 1  # the last window would start in the end padding
        if ceil_out != floor_out:
            raise node.error("ceil_mode=1 changes the output size here; not supported")


def _pool(ctx: ConvertContext, node: OnnxNode, op: str) -> None:
    shape = spatial_shape(ctx, node)
    if node.attr("kernel_shape") is None:
        raise node.error("attribute 'kernel_shape' is missing")
    win = window(node, shape[2:], node.attr("kernel_shape"))
    if win.dilations != (1, 1):
        raise node.error(f"dilations {list(win.dilations)} are not supported for pooling")
    _check_ceil_mode(node, shape[2:], win)
    if op == "AveragePool2D" and node.attr("count_include_pad", 0) and any(win.pads):
        raise node.error("count_include_pad=1 with padding is not supported")
    y = ctx.add(node, op, [to_nhwc(ctx, node)], kernel=win.kernel, strides=win.strides, pads=win.pads)
    from_nhwc(ctx, node, y, len(shape))


@converter("MaxPool")
def convert_maxpool(ctx, node):
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
    """Inference-mode batch normalisation over axis 1 (the running statistics are inputs)."""
    if not node.attr("spatial", 1):
        raise node.error("spatial=0 is not supported")
    if node.attr("training_mode", 0):
        raise node.error("training_mode=1 is not supported (export the model for inference)")
    if len(ctx.shape(node.input(0))) < 2:
        raise node.error("input must have a channel axis (rank >= 2)")
    if any(not node.input(i) for i in range(5)):
        raise node.error("needs all five inputs X, scale, B, input_mean, input_var")
    ctx.add(node, "BatchNorm", [ctx.kiln(i) for i in node.inputs[:5]], out=node.outputs[0],
            epsilon=float(node.attr("epsilon", 1e-5)), axis=1)
