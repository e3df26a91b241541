"""Normalisations: LayerNormalization, RMSNormalization (Kiln ops of their own), and the
ones composed of them or of reductions: InstanceNormalization, GroupNormalization,
MeanVarianceNormalization, LpNormalization.

Instance and group normalisation are a LayerNorm over each (sample, channel group) viewed
as one row, followed by the per-channel scale and bias as broadcast Mul and Add.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_shape import add_multi, norm_axis
from codegen.frontends.onnx.reader import OnnxNode


def _row_affine(ctx: ConvertContext, node: OnnxNode, index: int, shape, axis: int) -> str:
    """Input `index` (scale or bias) as one value per element of the normalised row: constants
    are broadcast here, computed values must already have the row's size."""
    name = node.input(index)
    row = tuple(shape[axis:])
    data = ctx.const(name)
    if data is not None:
        try:
            full = np.broadcast_to(data, row)
        except ValueError:
            raise node.error(f"input {index} of shape {list(data.shape)} does not broadcast to {list(row)}") from None
        return ctx.weight(node, ("scale", "bias")[index - 1], np.ascontiguousarray(full, np.float32))
    if int(np.prod(ctx.shape(name), dtype=np.int64)) != int(np.prod(row, dtype=np.int64)):
        raise node.error(f"input {index} ('{name}') computed at run time must have the shape {list(row)}")
    return ctx.kiln(name)


@converter("LayerNormalization", "RMSNormalization")
def convert_layer_norm(ctx, node):
    shape = ctx.shape(node.input(0))
    axis = norm_axis(node, int(node.attr("axis", -1)), len(shape))
    ins = [ctx.kiln(node.input(0))] + [_row_affine(ctx, node, i, shape, axis)
                                       for i in (1, 2) if node.input(i)]
    eps = float(node.attr("epsilon", 1e-5))
    if node.op_type == "RMSNormalization":
        ctx.add(node, "RMSNorm", ins, out=node.outputs[0], axis=axis, epsilon=eps)
        return
    if not node.input(1):
        raise node.error("Scale (input 1) is missing")
    stats = [o for o in node.outputs[1:3] if o]
    if stats:
        outs = list(node.outputs[:3]) + [""] * (3 - len(node.outputs[:3]))
        add_multi(ctx, node, "LayerNorm", ins, outs, axis=axis, epsilon=eps, with_stats=True)
    else:
        ctx.add(node, "LayerNorm", ins, out=node.outputs[0], axis=axis, epsilon=eps)


def _grouped_norm(ctx: ConvertContext, node: OnnxNode, groups: int, eps: float, scale, bias) -> None:
    """LayerNorm of x [N, C, ...] viewed as [N * groups, C / groups * spatial], then
    x * scale[c] + bias[c] per channel."""
    shape = ctx.shape(node.input(0))
    if len(shape) < 2:
        raise node.error(f"input must be [N, C, ...], got {list(shape)}")
    n, c = shape[0], shape[1]
    if c % groups:
        raise node.error(f"{c} channels do not divide into {groups} groups")
    rows = ctx.add(node, "Reshape", [ctx.kiln(node.input(0))], role="rows",
                   shape=(n * groups, int(np.prod(shape, dtype=np.int64)) // (n * groups)))
    normed = ctx.add(node, "LayerNorm", [rows], role="norm", axis=1, epsilon=eps)
    y = ctx.add(node, "Reshape", [normed], role="unrows", shape=tuple(shape))
    per_channel = (c,) + (1,) * (len(shape) - 2)
    for role, data, op in (("scale", scale, "Mul"), ("bias", bias, "Add")):
        last = role == "bias"
        if isinstance(data, np.ndarray):
            arg = ctx.weight(node, role, np.ascontiguousarray(data.reshape(per_channel), np.float32))
        else:
            arg = ctx.add(node, "Reshape", [ctx.kiln(data)], role=f"{role}_view", shape=per_channel)
        y = ctx.add(node, op, [y, arg], role="" if last else role, out=node.outputs[0] if last else None)


def _channel_param(ctx: ConvertContext, node: OnnxNode, index: int, channels: int, groups: int):
    """A per-channel scale or bias: constant data (repeated per group when given per group,
    as GroupNormalization-18 does) or the name of a computed [C] tensor."""
    data = ctx.const(node.input(index))
    if data is None:
        return node.input(index)
    data = np.asarray(data, np.float32).reshape(-1)
    if data.size == groups and groups != channels:
        data = np.repeat(data, channels // groups)
    if data.size != channels:
        raise node.error(f"input {index} has {data.size} values for {channels} channels")
    return data


@converter("InstanceNormalization")
def convert_instance_norm(ctx, node):
    c = ctx.shape(node.input(0))[1]
    _grouped_norm(ctx, node, c, float(node.attr("epsilon", 1e-5)), _channel_param(ctx, node, 1, c, c),
                  _channel_param(ctx, node, 2, c, c))


@converter("GroupNormalization")
def convert_group_norm(ctx, node):
    c = ctx.shape(node.input(0))[1]
    groups = int(node.attr("num_groups"))
    _grouped_norm(ctx, node, groups, float(node.attr("epsilon", 1e-5)),
                  _channel_param(ctx, node, 1, c, groups), _channel_param(ctx, node, 2, c, groups))


@converter("MeanVarianceNormalization")
def convert_mvn(ctx, node):
    """(x - mean) / sqrt(variance + 1e-9) over `axes` (ONNX's function body)."""
    rank = len(ctx.shape(node.input(0)))
    axes = tuple(sorted(norm_axis(node, int(a), rank, "axes entry") for a in node.attr("axes", [0, 2, 3])))
    x = ctx.kiln(node.input(0))
    mean = ctx.add(node, "Mean", [x], role="mean", axes=axes, keepdims=True)
    d = ctx.add(node, "Sub", [x, mean], role="centre")
    var = ctx.add(node, "Mean", [ctx.add(node, "Mul", [d, d], role="square")], role="var", axes=axes, keepdims=True)
    eps = ctx.weight(node, "epsilon", np.array(1e-9, np.float32))
    std = ctx.add(node, "Sqrt", [ctx.add(node, "Add", [var, eps], role="var_eps")], role="std")
    ctx.add(node, "Div", [d, std], out=node.outputs[0])


@converter("LpNormalization")
def convert_lp_norm(ctx, node):
    """x / ||x||_p along the axis, p = 1 or 2; 0 where the norm is 0 (as ONNX's reference)."""
    rank = len(ctx.shape(node.input(0)))
    axis = norm_axis(node, int(node.attr("axis", -1)), rank)
    p = int(node.attr("p", 2))
    if p not in (1, 2):
        raise node.error(f"p={p} is not 1 or 2")
    x = ctx.kiln(node.input(0))
    term = ctx.add(node, "Abs", [x], role="abs") if p == 1 else ctx.add(node, "Mul", [x, x], role="square")
    norm = ctx.add(node, "ReduceSum", [term], role="sum", axes=(axis,), keepdims=True)
    if p == 2:
        norm = ctx.add(node, "Sqrt", [norm], role="sqrt")
    zero = ctx.add(node, "Equal", [norm, ctx.weight(node, "zero", np.array(0.0, np.float32))], role="is_zero")
    safe = ctx.add(node, "Where", [zero, ctx.weight(node, "one", np.array(1.0, np.float32)), norm], role="safe")
    ctx.add(node, "Div", [x, safe], out=node.outputs[0])
