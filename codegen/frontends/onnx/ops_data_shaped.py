"""Ops whose output length depends on the data: NonZero, Unique, NonMaxSuppression.

Kiln compiles them with a static bound on that length and reports the actual one at run time
(codegen/ops/bounded.py), so their outputs can only be graph outputs. NonMaxSuppression's
max_output_boxes_per_class, iou_threshold and score_threshold must be constants: the first
sets the bound.
"""

from __future__ import annotations

from codegen.frontends.onnx.context import converter
from codegen.frontends.onnx.ops_shape import add_multi


@converter("NonZero")
def convert_non_zero(ctx, node):
    ctx.add(node, "NonZero", [ctx.kiln(node.input(0))], out=node.outputs[0])


@converter("Unique")
def convert_unique(ctx, node):
    axis = node.attr("axis")
    outs = list(node.outputs) + [""] * (4 - len(node.outputs))
    add_multi(ctx, node, "Unique", [ctx.kiln(node.input(0))], outs,
              axis=None if axis is None else int(axis), sorted=bool(node.attr("sorted", 1)))


@converter("NonMaxSuppression")
def convert_non_max_suppression(ctx, node):
    def scalar(index: int, what: str):
        if not node.input(index):
            return None
        data = ctx.require_const(node, index, what).reshape(-1)
        if data.size != 1:
            raise node.error(f"{what} must hold one value, not {data.size}")
        return data[0].item()

    limit = scalar(2, "max_output_boxes_per_class (it sets the static bound of the output)")
    iou = scalar(3, "iou_threshold")
    score = scalar(4, "score_threshold")
    ctx.add(node, "NonMaxSuppression", [ctx.kiln(node.input(0)), ctx.kiln(node.input(1))], out=node.outputs[0],
            center_point_box=int(node.attr("center_point_box", 0)),
            max_output_boxes_per_class=int(limit or 0), iou_threshold=float(iou or 0.0),
            score_threshold=None if score is None else float(score))
