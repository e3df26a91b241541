"""Elementwise ops and activations: Add/Sub/Mul/Div, Relu, Clip, Sigmoid, Tanh, Softmax."""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_shape import norm_axis
from codegen.frontends.onnx.reader import OnnxNode

# Clip's bounds before opset 11 default to the float32 range, which clamps nothing finite.
FLT_MAX = float(np.finfo(np.float32).max)


def _binary(ctx: ConvertContext, node: OnnxNode, op: str, a: str, b: str) -> None:
    ctx.add(node, op, [a, b], out=node.outputs[0])


@converter("Add", "Sub", "Mul")
def convert_binary(ctx, node):
    _binary(ctx, node, node.op_type, ctx.kiln(node.input(0)), ctx.kiln(node.input(1)))


@converter("Div")
def convert_div(ctx, node):
    """x / c with a constant float divisor is x * (1/c); other divisions have no Kiln op."""
    divisor = ctx.const(node.input(1))
    if divisor is None or divisor.dtype != np.float32:
        raise node.error("only division by a float32 constant is supported")
    if not np.all(divisor != 0):
        raise node.error("division by a constant that contains zero")
    recip = ctx.weight(node, "reciprocal", (np.float32(1) / divisor).astype(np.float32))
    _binary(ctx, node, "Mul", ctx.kiln(node.input(0)), recip)


def clip(ctx: ConvertContext, node: OnnxNode, lo: float, hi: float) -> None:
    ctx.add(node, "Clip", [ctx.kiln(node.input(0))], out=node.outputs[0], min=float(lo), max=float(hi))


@converter("Relu")
def convert_relu(ctx, node):
    clip(ctx, node, 0.0, float("inf"))


@converter("Clip")
def convert_clip(ctx, node):
    """Bounds are attributes before opset 11, optional constant inputs from 11 on."""
    if ctx.opset < 11:
        clip(ctx, node, node.attr("min", -FLT_MAX), node.attr("max", FLT_MAX))
        return
    bounds = []
    for index, default in ((1, float("-inf")), (2, float("inf"))):
        if not node.input(index):
            bounds.append(default)
            continue
        data = ctx.require_const(node, index, ("min", "max")[index - 1])
        if data.size != 1:
            raise node.error(f"{('min', 'max')[index - 1]} must be a scalar, got shape {list(data.shape)}")
        bounds.append(float(data.reshape(-1)[0]))
    clip(ctx, node, *bounds)


@converter("Sigmoid", "Tanh")
def convert_unary(ctx, node):
    ctx.add(node, node.op_type, [ctx.kiln(node.input(0))], out=node.outputs[0])


@converter("Softmax")
def convert_softmax(ctx, node):
    """From opset 13 Softmax normalises along `axis`; before, over all dims from `axis` on.

    The old form is Reshape to 2-D, Softmax over the last axis, Reshape back (no reshape when
    `axis` is already the last one).
    """
    x = node.input(0)
    shape = ctx.shape(x)
    rank = len(shape)
    if ctx.opset >= 13:
        axis = norm_axis(node, int(node.attr("axis", -1)), rank)
        ctx.add(node, "Softmax", [ctx.kiln(x)], out=node.outputs[0], axis=-1 if axis == rank - 1 else axis)
        return
    axis = norm_axis(node, int(node.attr("axis", 1)), rank)
    if axis == rank - 1:
        ctx.add(node, "Softmax", [ctx.kiln(x)], out=node.outputs[0], axis=-1)
        return
    flat = (int(np.prod(shape[:axis], dtype=np.int64)), int(np.prod(shape[axis:], dtype=np.int64)))
    x2 = ctx.add(node, "Reshape", [ctx.kiln(x)], role="to_2d", shape=flat)
    y2 = ctx.add(node, "Softmax", [x2], axis=-1)
    ctx.add(node, "Reshape", [y2], out=node.outputs[0], role="from_2d", shape=tuple(shape))
