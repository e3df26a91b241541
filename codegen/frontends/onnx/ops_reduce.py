"""Reductions: ReduceMean/Sum/Max/Min/Prod, the composite ones (L1, L2, LogSum, LogSumExp,
SumSquare), ArgMax/ArgMin, LogSoftmax and Hardmax.

`axes` is an attribute before opset 18 (13 for ReduceSum) and a constant input after; empty
axes reduce everything unless `noop_with_empty_axes` makes the op an identity. Composite
reductions become short chains of Kiln ops (ReduceL2 = Sqrt(ReduceSum(x * x)), ...).
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_shape import norm_axis
from codegen.frontends.onnx.reader import OnnxNode

# ONNX reduction -> Kiln op doing the reduction itself.
DIRECT = {"ReduceMean": "Mean", "ReduceSum": "ReduceSum", "ReduceMax": "ReduceMax", "ReduceMin": "ReduceMin",
          "ReduceProd": "ReduceProd"}
COMPOSITE = ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")


def reduce_axes(ctx: ConvertContext, node: OnnxNode) -> tuple[int, ...] | None:
    """The reduced axes (sorted, non-negative), () for all, None when the op is an identity."""
    since = 13 if node.op_type == "ReduceSum" else 18
    if ctx.opset < since:
        axes = node.attr("axes")
    else:
        axes = None if not node.input(1) else ctx.require_const(node, 1, "axes").reshape(-1).tolist()
    rank = len(ctx.shape(node.input(0)))
    if not axes:
        return None if node.attr("noop_with_empty_axes", 0) else ()
    return tuple(sorted({norm_axis(node, int(a), rank, "axes entry") for a in axes}))


def _reduce(ctx: ConvertContext, node: OnnxNode, op: str, x: str, axes, keep: bool, role: str = "",
            out: str | None = None) -> str:
    return ctx.add(node, op, [x], role=role, out=out, axes=tuple(axes), keepdims=keep)


@converter(*DIRECT, *COMPOSITE)
def convert_reduce(ctx, node):
    axes = reduce_axes(ctx, node)
    out = node.outputs[0]
    if axes is None:
        ctx.alias(out, node.input(0))
        return
    keep = bool(node.attr("keepdims", 1))
    x = ctx.kiln(node.input(0))
    kind = node.op_type
    if kind in ("ReduceMax", "ReduceMin") and ctx.dtype(node.input(0)) == "bool":  # any / all, in float32
        x = ctx.add(node, "Cast", [x], role="to_float32", to="float32")
        y = _reduce(ctx, node, DIRECT[kind], x, axes, keep, role="float32")
        ctx.add(node, "Cast", [y], out=out, to="bool")
    elif kind in DIRECT:
        _reduce(ctx, node, DIRECT[kind], x, axes, keep, out=out)
    elif kind == "ReduceL1":
        _reduce(ctx, node, "ReduceSum", ctx.add(node, "Abs", [x], role="abs"), axes, keep, out=out)
    elif kind in ("ReduceL2", "ReduceSumSquare"):
        sq = ctx.add(node, "Mul", [x, x], role="square")
        if kind == "ReduceSumSquare":
            _reduce(ctx, node, "ReduceSum", sq, axes, keep, out=out)
        else:
            s = _reduce(ctx, node, "ReduceSum", sq, axes, keep, role="sum")
            ctx.add(node, "Sqrt", [s], out=out)
    elif kind == "ReduceLogSum":
        ctx.add(node, "Log", [_reduce(ctx, node, "ReduceSum", x, axes, keep, role="sum")], out=out)
    else:  # ReduceLogSumExp, shifted by the maximum so that exp cannot overflow
        m = _reduce(ctx, node, "ReduceMax", x, axes, True, role="max")
        e = ctx.add(node, "Exp", [ctx.add(node, "Sub", [x, m], role="shift")], role="exp")
        log = ctx.add(node, "Log", [_reduce(ctx, node, "ReduceSum", e, axes, True, role="sum")], role="log")
        if keep:
            ctx.add(node, "Add", [log, m], out=out)
        else:
            y = ctx.add(node, "Add", [log, m], role="unshift")
            ctx.add(node, "Reshape", [y], out=out, role="squeeze",
                    shape=tuple(d for i, d in enumerate(ctx.shape(node.input(0))) if i not in (axes or range(99))))


# Integer types whose every value float32 holds exactly: a Cast keeps their order and ties.
_EXACT_IN_FLOAT = ("int8", "uint8", "int16", "uint16")


def _ordered_as_float(ctx: ConvertContext, node: OnnxNode) -> str:
    """The ArgMax/ArgMin input as float32 in the same order: a quantized tensor (a QOperator
    model's int8 or uint8 activation) dequantized, its scale being positive; a small integer
    tensor cast. Other types reach the op, which names them in its refusal."""
    x, v = ctx.kiln(node.input(0)), ctx.value(node.input(0))
    if v.dtype == "float32":
        return x
    if v.quant is not None and not v.quant.per_channel:
        return ctx.add(node, "Dequantize", [x], role="real")
    if v.quant is None and v.dtype in _EXACT_IN_FLOAT:
        return ctx.add(node, "Cast", [x], role="real", to="float32")
    return x


@converter("ArgMax", "ArgMin")
def convert_arg(ctx, node):
    rank = len(ctx.shape(node.input(0)))
    ctx.add(node, node.op_type, [_ordered_as_float(ctx, node)], out=node.outputs[0],
            axis=norm_axis(node, int(node.attr("axis", 0)), rank), keepdims=bool(node.attr("keepdims", 1)),
            select_last_index=bool(node.attr("select_last_index", 0)))


def _softmax_rows(ctx: ConvertContext, node: OnnxNode) -> tuple[str, int, tuple[int, ...] | None]:
    """(input, axis, shape to restore) of a Softmax-family node: opset 13+ works on one axis;
    before, on the input flattened to 2-D at `axis` (restored with a Reshape)."""
    x = node.input(0)
    shape = ctx.shape(x)
    rank = len(shape)
    if ctx.opset >= 13:
        return ctx.kiln(x), norm_axis(node, int(node.attr("axis", -1)), rank), None
    axis = norm_axis(node, int(node.attr("axis", 1)), rank)
    if axis == rank - 1:
        return ctx.kiln(x), axis, None
    flat = (int(np.prod(shape[:axis], dtype=np.int64)), int(np.prod(shape[axis:], dtype=np.int64)))
    return ctx.add(node, "Reshape", [ctx.kiln(x)], role="to_2d", shape=flat), 1, tuple(shape)


def _finish(ctx: ConvertContext, node: OnnxNode, op: str, ins: list[str], restore, **attrs) -> None:
    if restore is None:
        ctx.add(node, op, ins, out=node.outputs[0], **attrs)
    else:
        y = ctx.add(node, op, ins, role="rows", **attrs)
        ctx.add(node, "Reshape", [y], out=node.outputs[0], role="from_2d", shape=restore)


def log_softmax(ctx: ConvertContext, node: OnnxNode, x: str, axis: int, out: str | None = None,
                final_role: str = "log_softmax") -> str:
    """x - max - log(sum(exp(x - max))) along `axis`: five Kiln ops."""
    m = _reduce(ctx, node, "ReduceMax", x, (axis,), True, role="max")
    d = ctx.add(node, "Sub", [x, m], role="shift")
    s = _reduce(ctx, node, "ReduceSum", ctx.add(node, "Exp", [d], role="exp"), (axis,), True, role="sum")
    return ctx.add(node, "Sub", [d, ctx.add(node, "Log", [s], role="log")], out=out, role="" if out else final_role)


@converter("LogSoftmax")
def convert_logsoftmax(ctx, node):
    x, axis, restore = _softmax_rows(ctx, node)
    if restore is None:
        log_softmax(ctx, node, x, axis, out=node.outputs[0])
        return
    y = log_softmax(ctx, node, x, axis)
    ctx.add(node, "Reshape", [y], out=node.outputs[0], role="from_2d", shape=restore)


@converter("Hardmax")
def convert_hardmax(ctx, node):
    """1.0 at the first largest element along the axis, 0.0 elsewhere: Equal(ArgMax, index)."""
    x, axis, restore = _softmax_rows(ctx, node)
    shape = ctx.b.g.values[x].shape
    arg = ctx.add(node, "ArgMax", [x], role="argmax", axis=axis, keepdims=True, select_last_index=False)
    index = np.arange(shape[axis], dtype=np.int64).reshape([-1 if i == axis else 1 for i in range(len(shape))])
    hot = ctx.add(node, "Equal", [arg, ctx.weight(node, "index", index)], role="hot")
    _finish(ctx, node, "Cast", [hot], restore, to="float32")


@converter("CumSum", "CumProd")
def convert_cumulative(ctx, node):
    """The axis is a constant input (a scalar or one-element tensor)."""
    axis = ctx.require_const(node, 1, "axis").reshape(-1)
    if axis.size != 1:
        raise node.error(f"axis must be one value, got {axis.size}")
    rank = len(ctx.shape(node.input(0)))
    ctx.add(node, node.op_type, [ctx.kiln(node.input(0))], out=node.outputs[0],
            axis=norm_axis(node, int(axis[0]), rank), exclusive=bool(node.attr("exclusive", 0)),
            reverse=bool(node.attr("reverse", 0)))


@converter("TopK")
def convert_topk(ctx, node):
    """k is an attribute before opset 10, a constant input after; `sorted` is always honoured."""
    from codegen.frontends.onnx.ops_shape import add_multi

    k = node.attr("k") if ctx.opset < 10 else int(ctx.require_const(node, 1, "k").reshape(-1)[0])
    rank = len(ctx.shape(node.input(0)))
    outs = list(node.outputs) + [""] * (2 - len(node.outputs))
    add_multi(ctx, node, "TopK", [ctx.kiln(node.input(0))], outs[:2], k=int(k),
              axis=norm_axis(node, int(node.attr("axis", -1)), rank), largest=bool(node.attr("largest", 1)))
