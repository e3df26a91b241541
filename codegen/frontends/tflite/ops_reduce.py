"""TFLite reductions: SUM, REDUCE_MAX / REDUCE_MIN / REDUCE_ALL, ARG_MAX / ARG_MIN, CUMSUM.

The axes are a constant input (negative and repeated entries allowed, as in TFLite). int8
REDUCE_MAX / MIN and ARG_MAX / MIN pick stored values, which dequantizing keeps in order, so
they run in float between an exact Dequantize and Quantize; quantized SUM and int8 CUMSUM rescale
with TFLite Micro's fixed-point steps (QuantizedSum, QuantizedCumSum).
"""

from __future__ import annotations

from codegen.frontends.tflite.compose import axis, ints, one_int, only_types, same_quant, step, type_name
from codegen.frontends.tflite.importer import OpContext
from codegen.frontends.tflite.converter import converts


def _axes(ctx: OpContext) -> tuple[int, ...]:
    rank = len(ctx.shape(0))
    return tuple(sorted({axis(ctx, a, rank) for a in ints(ctx, 1, "axes")}))


@converts("SUM", inputs=(2, 2))
def reduce_sum(ctx: OpContext) -> None:
    keepdims = bool(ctx.options("ReducerOptions")["KeepDims"])
    if type_name(ctx) in ("INT8", "INT16") and ctx.tensor(0).quant is not None:
        ctx.emit("QuantizedSum", [ctx.input(0)], axes=_axes(ctx), keepdims=keepdims)  # TFLM's requantized sum
        return
    only_types(ctx, ("FLOAT32",))
    ctx.emit("ReduceSum", [ctx.input(0)], axes=_axes(ctx), keepdims=keepdims)


@converts("REDUCE_MAX", inputs=(2, 2))
@converts("REDUCE_MIN", inputs=(2, 2))
def reduce_extreme(ctx: OpContext) -> None:
    kiln_op = {"REDUCE_MAX": "ReduceMax", "REDUCE_MIN": "ReduceMin"}[ctx.code]
    attrs = dict(axes=_axes(ctx), keepdims=bool(ctx.options("ReducerOptions")["KeepDims"]))
    if type_name(ctx) == "INT8":
        same_quant(ctx)  # TFLite Micro requires it: the result is one of the stored values
        x = step(ctx, "Dequantize", [ctx.input(0)], "real")
        ctx.emit("Quantize", [step(ctx, kiln_op, [x], "reduce", **attrs)])
        return
    only_types(ctx, ("FLOAT32",))
    ctx.emit(kiln_op, [ctx.input(0)], **attrs)


@converts("REDUCE_ALL", inputs=(2, 2))
def reduce_all(ctx: OpContext) -> None:
    # all(x) = min over the values as 0.0 / 1.0, back to bool.
    only_types(ctx, ("BOOL",))
    x = step(ctx, "Cast", [ctx.input(0)], "real", to="float32")
    m = step(ctx, "ReduceMin", [x], "min", axes=_axes(ctx), keepdims=bool(ctx.options("ReducerOptions")["KeepDims"]))
    ctx.emit("Cast", [m], to="bool")


@converts("ARG_MAX", inputs=(2, 2))
@converts("ARG_MIN", inputs=(2, 2))
def arg_extreme(ctx: OpContext) -> None:
    """The first index of the largest (smallest) value along one axis; int32 or int64 result."""
    only_types(ctx, ("FLOAT32", "INT8"))
    a = one_int(ctx, 1, "axis")
    x = ctx.input(0)
    if type_name(ctx) == "INT8":  # scale > 0: dequantizing keeps the order of the stored values
        x = step(ctx, "Dequantize", [x], "real")
    kiln_op = {"ARG_MAX": "ArgMax", "ARG_MIN": "ArgMin"}[ctx.code]
    attrs = dict(axis=axis(ctx, a, len(ctx.shape(0))), keepdims=False, select_last_index=False)
    if ctx.out_tensor().type_name == "INT64":
        ctx.emit(kiln_op, [x], **attrs)
        return
    ctx.emit("Cast", [step(ctx, kiln_op, [x], "index", **attrs)], to="int32")


@converts("CUMSUM", inputs=(2, 2))
def cumsum(ctx: OpContext) -> None:
    kiln_op = "QuantizedCumSum" if type_name(ctx) == "INT8" else "CumSum"
    if kiln_op == "CumSum":
        only_types(ctx, ("FLOAT32",))
    o = ctx.options("CumsumOptions")
    a = one_int(ctx, 1, "axis")
    ctx.emit(kiln_op, [ctx.input(0)], axis=axis(ctx, a, len(ctx.shape(0))), exclusive=bool(o["Exclusive"]),
             reverse=bool(o["Reverse"]))

