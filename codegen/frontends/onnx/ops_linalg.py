"""Linear algebra beyond MatMul: Det (one Kiln op)."""

from __future__ import annotations

from codegen.frontends.onnx.context import converter


@converter("Det")
def convert_det(ctx, node):
    ctx.add(node, "Det", [ctx.kiln(node.input(0))], out=node.outputs[0])
