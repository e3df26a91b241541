"""Newer composite operators, as chains of Kiln ops: OneHot, AffineGrid, SwiGLU,
RotaryEmbedding and CausalConvWithState.

Their parameters (depth and values of OneHot, AffineGrid's size, RotaryEmbedding's caches and
position ids, CausalConvWithState's weights) must be constants; whatever can be computed at
compile time (grids, rotation tables) is, with ONNX's reference implementation where it
defines the layout.
"""

from __future__ import annotations

import numpy as np
from onnx.reference import ReferenceEvaluator

from codegen.frontends.onnx.context import ConvertContext, converter, declared_attrs
from codegen.frontends.onnx.ops_shape import norm_axis
from codegen.frontends.onnx.reader import OnnxNode, _short


def _reference(ctx: ConvertContext, node: OnnxNode, feeds: dict) -> list[np.ndarray]:
    try:
        return ReferenceEvaluator(node.proto, opsets={"": ctx.opset}).run(None, feeds)
    except Exception as err:
        raise node.error(f"cannot compute its compile-time tables ({_short(err)})") from None


@converter("OneHot")
def convert_one_hot(ctx, node):
    """Where(index == c or index == c - depth, on, off) for the classes c along `axis`
    (indices truncated to integers; out-of-range ones match no class)."""
    depth = int(ctx.require_const(node, 1, "depth").reshape(-1)[0])
    values = ctx.require_const(node, 2, "values").reshape(-1)
    shape = ctx.shape(node.input(0))
    rank = len(shape) + 1
    axis = norm_axis(node, int(node.attr("axis", -1)), rank)
    idx = ctx.kiln(node.input(0))
    if ctx.dtype(node.input(0)) != "int64":
        idx = ctx.add(node, "Cast", [idx], role="int_index", to="int64")
    idx = ctx.add(node, "Reshape", [idx], role="unsqueeze", shape=tuple(shape[:axis]) + (1,) + tuple(shape[axis:]))
    classes = np.arange(depth, dtype=np.int64).reshape([-1 if i == axis else 1 for i in range(rank)])
    hot = ctx.add(node, "Or", [ctx.add(node, "Equal", [idx, ctx.weight(node, "classes", classes)], role="hot"),
                               ctx.add(node, "Equal", [idx, ctx.weight(node, "from_end", classes - depth)],
                                       role="hot_negative")], role="hot_any")
    ctx.add(node, "Where", [hot, ctx.weight(node, "on", values[1:2].reshape(())),
                            ctx.weight(node, "off", values[0:1].reshape(()))], out=node.outputs[0])


@converter("AffineGrid")
def convert_affine_grid(ctx, node):
    """theta [N, 2, 3] (or [N, 3, 4]) times the constant homogeneous base grid of `size`."""
    from onnx.reference.ops.op_affine_grid import construct_original_grid

    size = [int(v) for v in ctx.require_const(node, 1, "size").reshape(-1)]
    spatial = size[2:]
    base = construct_original_grid(spatial, int(node.attr("align_corners", 0)))
    points = int(np.prod(spatial))
    base_t = np.ascontiguousarray(base.reshape(points, -1).T, np.float32)  # [dims + 1, points]
    grid = ctx.add(node, "MatMul", [ctx.kiln(node.input(0)), ctx.weight(node, "base_grid", base_t)], role="grid")
    t = ctx.add(node, "Transpose", [grid], role="points_first", perm=(0, 2, 1))
    ctx.add(node, "Reshape", [t], out=node.outputs[0], shape=(size[0], *spatial, len(spatial)))


@converter("SwiGLU")
def convert_swiglu(ctx, node):
    """a * sigmoid(alpha * a) * b."""
    alpha = float(node.attr("alpha", 1.0))
    swish = ctx.add(node, "Swish", [ctx.kiln(node.input(0))], role="swish", alpha=alpha)
    ctx.add(node, "Mul", [swish, ctx.kiln(node.input(1))], out=node.outputs[0])


@converter("RotaryEmbedding")
def convert_rotary(ctx, node):
    """y = x * C + x[partner] * S: the rotation pairs every rotated element with its partner
    (the other half, or its interleaved neighbour); C holds the cosines (1 where nothing
    rotates), S the signed sines (0 there). C, S and the partner table are read off ONNX's
    reference run on position numbers and on unit inputs, so its layout rules hold."""
    x = node.input(0)
    shape = ctx.shape(x)
    cos = ctx.require_const(node, 1, "cos_cache")
    sin = ctx.require_const(node, 2, "sin_cache")
    pos = {node.input(3): ctx.require_const(node, 3, "position_ids")} if node.input(3) else {}
    n = int(np.prod(shape))
    iota = (np.arange(n, dtype=np.float64) + 1).reshape(shape)
    names = [node.input(i) for i in range(3)]

    def run(data, c, s):
        return _reference(ctx, node, {names[0]: data, names[1]: c, names[2]: s, **pos})[0]
    swapped = np.rint(run(iota, np.zeros_like(cos, np.float64), np.ones_like(sin, np.float64))).astype(np.int64)
    partner = np.abs(swapped) - 1
    still = swapped == iota.astype(np.int64)  # not rotated: the element itself, unchanged
    ones = np.ones(shape)
    c_full = run(ones, cos.astype(np.float64), np.zeros_like(sin, np.float64)).astype(np.float32)
    s_full = np.where(still, 0.0, run(ones, np.zeros_like(cos, np.float64), sin.astype(np.float64))).astype(np.float32)
    xv = ctx.kiln(x)
    scaled = ctx.add(node, "Mul", [xv, ctx.weight(node, "cos", c_full)], role="cos_part")
    moved = ctx.add(node, "Take", [xv, ctx.weight(node, "partner", partner)], role="partner")
    rotated = ctx.add(node, "Mul", [moved, ctx.weight(node, "sin", s_full)], role="sin_part")
    ctx.add(node, "Add", [scaled, rotated], out=node.outputs[0])


@converter("CausalConvWithState")
def convert_causal_conv(ctx, node):
    """Concat(past or zeros, x) along time, a depthwise Conv1d without padding (activation
    silu/swish: x * sigmoid(x)), and the last k - 1 steps as the present state."""
    x = node.input(0)
    b, c, length = ctx.shape(x)
    w = ctx.require_const(node, 1, "weight")
    if w.shape[:2] != (c, 1) or w.shape[2] < 1:
        raise node.error(f"weight {list(w.shape)} must be [{c}, 1, k]")
    k = w.shape[2]
    act = node.attr("activation", "none")
    if act not in ("none", "silu", "swish"):
        raise node.error(f"activation '{act}' is not none, silu or swish")
    state = node.outputs[1] if len(node.outputs) > 1 else ""
    if k == 1:  # no past and an empty state: a constant with no elements (nothing to compute)
        padded = ctx.kiln(x)
        ctx.bind_const(state, np.zeros((b, c, 0), np.float32))
        state = ""
    else:
        past = ctx.kiln(node.input(3)) if node.input(3) else \
            ctx.weight(node, "zero_state", np.zeros((b, c, k - 1), np.float32))
        padded = ctx.add(node, "Concat", [past, ctx.kiln(x)], role="padded", axis=2)
    total = length + k - 1
    nhwc = ctx.add(node, "Transpose", [ctx.add(node, "Reshape", [padded], role="to_2d", shape=(b, c, 1, total))],
                   role="to_nhwc", perm=(0, 2, 3, 1))
    ins = [nhwc, ctx.weight(node, "dw_weight", np.ascontiguousarray(w.reshape(c, k).T.reshape(1, 1, k, c)))]
    if node.input(2):
        ins.append(ctx.kiln(node.input(2)))
    y = ctx.add(node, "DepthwiseConv2D", ins, role="conv", strides=(1, 1), dilations=(1, 1), pads=(0, 0, 0, 0))
    if act != "none":
        y = ctx.add(node, "Swish", [y], role="silu", alpha=1.0)
    y = ctx.add(node, "Transpose", [y], role="to_nchw", perm=(0, 3, 1, 2))
    ctx.add(node, "Reshape", [y], out=node.outputs[0], role="to_1d", shape=(b, c, length))
    if state:
        ctx.add(node, "Slice", [padded], out=state, role="state", starts=(0, 0, total - (k - 1)),
                ends=(b, c, total), steps=(1, 1, 1))


@converter("GridSample")
def convert_grid_sample(ctx, node):
    """Opset 16 names the modes bilinear / bicubic, later opsets linear / cubic."""
    ctx.add(node, "GridSample", [ctx.kiln(node.input(0)), ctx.kiln(node.input(1))], out=node.outputs[0],
            **declared_attrs(node, "GridSample", convert={
                "mode": lambda mode: {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode),
                "align_corners": bool}))


@converter("DFT", "STFT")
def convert_linear_transform(ctx, node):
    """Transforms linear in their first input (the other inputs constant): one MatMul by the
    transform's matrix, read off ONNX's reference applied to the unit basis. Every sample of
    the leading (batch) axis goes through the same [F, G] matrix, F and G the sizes of the
    rest of the input and of the output (a DFT over one of several axes stores the block-
    diagonal matrix: exact, if larger than an FFT would need)."""
    x = node.input(0)
    shape = ctx.shape(x)
    if ctx.dtype(x) != "float32":
        raise node.error(f"input is {ctx.dtype(x)}; only float32 is supported")
    feat = int(np.prod(shape[1:], dtype=np.int64))
    if feat > 4096:
        raise node.error(f"the transform matrix of {feat} inputs would be too large")
    feeds = {}
    for i, name in enumerate(node.inputs[1:], start=1):
        if name:
            feeds[name] = ctx.require_const(node, i, f"input {i}")
    basis = np.eye(feat, dtype=np.float32).reshape((feat,) + tuple(shape[1:]))
    out = _reference(ctx, node, {x: basis, **feeds})[0]
    matrix = np.ascontiguousarray(out.reshape(feat, -1), np.float32)
    flat = ctx.add(node, "Reshape", [ctx.kiln(x)], role="flat", shape=(shape[0], feat))
    y = ctx.add(node, "MatMul", [flat, ctx.weight(node, "matrix", matrix)], role="transform")
    ctx.add(node, "Reshape", [y], out=node.outputs[0], shape=(shape[0],) + tuple(out.shape[1:]))


@converter("DynamicQuantizeLinear")
def convert_dynamic_quantize(ctx, node):
    """uint8 quantisation with a scale and zero point computed from the tensor at run time,
    ONNX's function body in float32 ops: range [min(x, 0), max(x, 0)] over 255 steps,
    zero point round(clip(-min / scale, 0, 255)), y = clip(round(x / scale) + zp, 0, 255)."""
    x = ctx.kiln(node.input(0))
    zero = ctx.weight(node, "zero", np.array(0.0, np.float32))
    lo = ctx.add(node, "Minimum", [ctx.add(node, "ReduceMin", [x], role="min", axes=(), keepdims=False), zero],
                 role="min0")
    hi = ctx.add(node, "Maximum", [ctx.add(node, "ReduceMax", [x], role="max", axes=(), keepdims=False), zero],
                 role="max0")
    scale = ctx.add(node, "Div", [ctx.add(node, "Sub", [hi, lo], role="range"),
                                  ctx.weight(node, "steps", np.array(255.0, np.float32))],
                    role="scale", out=node.outputs[1] if len(node.outputs) > 1 and node.outputs[1] else None)
    zp = ctx.add(node, "Sub", [zero, ctx.add(node, "Div", [lo, scale], role="min_scaled")], role="zp_initial")
    zp = ctx.add(node, "Round", [ctx.add(node, "Clip", [zp], role="zp_clipped", min=0.0, max=255.0)], role="zp")
    if len(node.outputs) > 2 and node.outputs[2]:
        ctx.add(node, "Cast", [zp], role="zp_u8", out=node.outputs[2], to="uint8")
    q = ctx.add(node, "Round", [ctx.add(node, "Div", [x, scale], role="x_scaled")], role="x_rounded")
    q = ctx.add(node, "Clip", [ctx.add(node, "Add", [q, zp], role="x_shifted")], role="x_clipped", min=0.0, max=255.0)
    ctx.add(node, "Cast", [q], out=node.outputs[0], to="uint8")
