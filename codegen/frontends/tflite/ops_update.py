"""DYNAMIC_UPDATE_SLICE onto Kiln's DynamicUpdateSlice op (positions computed at run time)."""

from __future__ import annotations

from codegen.frontends.tflite import compose
from codegen.frontends.tflite.converter import converts
from codegen.frontends.tflite.importer import OpContext


@converts("DYNAMIC_UPDATE_SLICE", inputs=(3, 3))
def dynamic_update_slice(ctx: OpContext) -> None:
    compose.same_quant(ctx, inputs=(0, 1))  # TFLite Micro copies the stored values
    ctx.emit("DynamicUpdateSlice", [ctx.input(0), ctx.input(1), ctx.input(2)])
