"""Ops whose output shape depends on the values of their inputs, as shape arithmetic uses
them: ConstantOfShape and Range.

Kiln's tensors have static shapes, so these are computed at import time when their inputs
are constants. Nodes with constant inputs are already folded before any converter runs;
these converters catch inputs that become constant only during conversion (the outputs of an
inlined If branch or an unrolled Loop) and refuse computed inputs with the reason. (NonZero,
Unique and NonMaxSuppression compile with a static bound on their output length:
ops_data_shaped.)
"""

from __future__ import annotations

from codegen.frontends.onnx.context import converter


def specialize_hint(ctx, name: str) -> str:
    """How to make a graph input a compile-time value, when `name` is one."""
    return f"; to fix this graph input: --specialize {name}=v0,v1,..." if name in ctx.b.g.inputs else ""


@converter("ConstantOfShape", "Range")
def convert_value_shaped(ctx, node):
    from codegen.frontends.onnx.convert import fold

    computed = [i for i in node.inputs if i and not ctx.is_const(i)]
    if computed:
        raise node.error(f"its output shape depends on the values of '{computed[0]}', which is computed at "
                         "run time; Kiln compiles static shapes (a constant input would be folded"
                         f"{specialize_hint(ctx, computed[0])})")
    fold(ctx, node)
