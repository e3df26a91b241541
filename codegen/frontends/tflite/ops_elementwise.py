"""Elementwise TFLite builtins: math, comparisons, logic, selection and casts.

Float32 maps onto Kiln's float ops (one op, or a short chain where TFLite has no single
counterpart: RSQRT = Reciprocal(Sqrt), FLOOR_DIV = Floor(Div)). Quantized operands are
converted only where Kiln computes what TFLite Micro computes bit for bit:
MAXIMUM / MINIMUM / SELECT_V2 / comparisons move or compare the stored values, which is
exact when every operand shares one quantization; int8 ABS, ELU, LEAKY_RELU, HARD_SWISH and RSQRT
are TFLite Micro's formulas tabulated at import (lut.py); int8 DIV, ADD_N, LOG_SOFTMAX and
L2_NORMALIZATION, int8 / int16 SQUARED_DIFFERENCE and PRELU have their kernels. The others are
refused with the reason.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.tflite import lut
from codegen.frontends.tflite.compose import (QUANTIZED, finish, only_types, refuse_quantized, same_quant, step,
                                              type_name)
from codegen.frontends.tflite.importer import OpContext
from codegen.frontends.tflite.converter import converts
from codegen.ops.quantized_add_n import MAX_INPUTS as MAX_ADD_N_INPUTS
from codegen.quant.params import quantize_multiplier

NEEDS_INT8_KERNEL = "needs a kernel with TFLite Micro's fixed-point arithmetic for this op"

_FLOAT_UNARY = {"ABS": "Abs", "CEIL": "Ceil", "COS": "Cos", "EXP": "Exp", "FLOOR": "Floor", "LOG": "Log",
                "NEG": "Neg", "ROUND": "Round", "SIN": "Sin", "SQRT": "Sqrt", "HARD_SWISH": "HardSwish"}


def _float_unary(ctx: OpContext) -> None:
    int8_table = {"ABS": lut.abs_int8, "HARD_SWISH": lut.hard_swish_int8}.get(ctx.code)
    if int8_table is not None and type_name(ctx) == "INT8":
        int8_table(ctx)
        return
    if ctx.code == "ABS" and type_name(ctx) == "INT16" and ctx.tensor(0).quant is not None:
        lut.abs_int16(ctx)
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    only_types(ctx, ("FLOAT32",))
    ctx.emit(_FLOAT_UNARY[ctx.code], [ctx.input(0)])


for _code in _FLOAT_UNARY:
    converts(_code)(_float_unary)


@converts("RSQRT")
def rsqrt(ctx: OpContext) -> None:
    # TFLite Micro computes 1.f / std::sqrt(x): the same two roundings as Reciprocal(Sqrt).
    if type_name(ctx) == "INT8":
        lut.rsqrt_int8(ctx)
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    only_types(ctx, ("FLOAT32",))
    ctx.emit("Reciprocal", [step(ctx, "Sqrt", [ctx.input(0)], "sqrt")])


@converts("SQUARE")
def square(ctx: OpContext) -> None:
    only_types(ctx, ("FLOAT32",))
    ctx.emit("Mul", [ctx.input(0), ctx.input(0)])


@converts("ELU")
def elu(ctx: OpContext) -> None:
    if type_name(ctx) == "INT8":
        lut.elu_int8(ctx)
        return
    ctx.emit("Elu", [ctx.input(0)], alpha=1.0)


@converts("LEAKY_RELU")
def leaky_relu(ctx: OpContext) -> None:
    alpha = float(ctx.options("LeakyReluOptions")["Alpha"])
    if type_name(ctx) == "INT8":
        lut.leaky_relu_int8(ctx, alpha)
        return
    if type_name(ctx) == "INT16":
        lut.leaky_relu_int16(ctx, alpha)
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    ctx.emit("LeakyRelu", [ctx.input(0)], alpha=alpha)


@converts("PRELU", inputs=(2, 2))
def prelu(ctx: OpContext) -> None:
    if type_name(ctx) in ("INT8", "INT16"):
        _prelu_quantized(ctx)
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    ctx.emit("PRelu", [ctx.input(0), ctx.input(1)])


def _prelu_quantized(ctx: OpContext) -> None:
    """TFLite Micro's CalculatePreluParams (multipliers from the scales in double) on a constant
    int8 alpha with one value, or one per channel of the last axis."""
    qi, qa, qo = ctx.tensor(0).quant, ctx.tensor(1).quant, ctx.out_tensor().quant
    if ctx.tensor(1).type_name != "INT8":  # TFLM reads alpha as int8 for both input types
        raise ctx.error(f"a {ctx.tensor(1).type_name.lower()} alpha is not supported (TFLite Micro reads int8)")
    if any(q is None or q.per_channel for q in (qi, qa, qo)):
        raise ctx.error("needs one scale and zero point on the input, alpha and output")
    alpha = ctx.const(1, "alpha").astype(np.int64)
    x_shape = ctx.shape(0)
    if any(d != 1 for d in alpha.shape[:-1]) or (alpha.size != 1 and (not x_shape or alpha.shape[-1] != x_shape[-1])):
        raise ctx.error(f"an alpha of shape {list(alpha.shape)} is supported only as one value or one per channel "
                        f"of the last axis (input {list(x_shape)})")
    s_in, s_alpha, s_out = (float(np.float32(q.s)) for q in (qi, qa, qo))
    positive = quantize_multiplier(s_in / s_out)
    negative = quantize_multiplier(s_in * s_alpha / s_out)
    ctx.emit("QuantizedPRelu", [ctx.input(0)], alpha=tuple(int(a) - qa.zp for a in alpha.reshape(-1)),
             input_zp=qi.zp, output_zp=qo.zp, positive=tuple(map(int, positive)),
             negative=tuple(map(int, negative)))


# -- binary arithmetic ----------------------------------------------------------------------------

@converts("DIV", inputs=(2, 2))
def div(ctx: OpContext) -> None:
    if type_name(ctx) == "INT8":
        ctx.emit("QuantizedDiv", [ctx.input(0), ctx.input(1)], activation=ctx.activation(ctx.options("DivOptions")))
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    only_types(ctx, ("FLOAT32", "INT32"))
    act = ctx.activation(ctx.options("DivOptions"))
    if act != "none" and type_name(ctx) != "FLOAT32":
        raise ctx.error(f"a fused {act} on an int32 DIV is not supported")
    finish(ctx, "Div", [ctx.input(0), ctx.input(1)], act)


@converts("FLOOR_DIV", inputs=(2, 2))
def floor_div(ctx: OpContext) -> None:
    # TFLite: std::floor(x / y) for float.
    only_types(ctx, ("FLOAT32",))
    ctx.emit("Floor", [step(ctx, "Div", [ctx.input(0), ctx.input(1)], "div")])


@converts("FLOOR_MOD", inputs=(2, 2))
def floor_mod(ctx: OpContext) -> None:
    # TFLite: fmod, moved by y when the signs differ: Mod with the sign of the divisor.
    only_types(ctx, ("FLOAT32",))
    ctx.emit("Mod", [ctx.input(0), ctx.input(1)], fmod=0)


@converts("SQUARED_DIFFERENCE", inputs=(2, 2))
def squared_difference(ctx: OpContext) -> None:
    if type_name(ctx) in ("INT8", "INT16", "FLOAT32"):
        ctx.emit("SquaredDifference", [ctx.input(0), ctx.input(1)])
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    d = step(ctx, "Sub", [ctx.input(0), ctx.input(1)], "sub")
    ctx.emit("Mul", [d, d])


@converts("ADD_N", inputs=(1, None))
def add_n(ctx: OpContext) -> None:
    n = len(ctx.op.inputs)
    if type_name(ctx) == "INT8":
        _add_n_int8(ctx, n)
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    if n == 1:
        ctx.emit("Reshape", [ctx.input(0)], shape=ctx.shape(0))
        return
    acc = ctx.input(0)
    for k in range(1, n - 1):  # TFLite Micro sums in input order
        acc = step(ctx, "Add", [acc, ctx.input(k)], f"sum{k}")
    ctx.emit("Add", [acc, ctx.input(n - 1)])


def _add_n_int8(ctx: OpContext, n: int) -> None:
    """TFLite Micro's add_n.cc Prepare: one quantization on every input (checked there too), the
    output multiplier 2 * s_in / (2**20 * s_out) in double, below one."""
    if n < 2:
        raise ctx.error("int8 with one input is refused by TFLite Micro too (it needs at least two)")
    if n > MAX_ADD_N_INPUTS:
        raise ctx.error(f"int8 with {n} inputs is not supported (at most {MAX_ADD_N_INPUTS}: the int32 sum "
                        "would overflow)")
    qs = [ctx.tensor(k).quant for k in range(n)]
    qo = ctx.out_tensor().quant
    if qo is None or qs[0] is None or qo.per_channel or qs[0].per_channel or any(q != qs[0] for q in qs):
        raise ctx.error("int8 needs one scale and zero point shared by every input, and one on the output")
    s_in, s_out = float(np.float32(qs[0].s)), float(np.float32(qo.s))
    multiplier, shift = quantize_multiplier(2 * s_in / ((1 << 20) * s_out))
    if shift > 0:
        raise ctx.error(f"int8 with an output scale below 2**-19 of the input scale ({s_out} against {s_in}) is "
                        "refused by TFLite Micro too")
    ctx.emit("QuantizedAddN", [ctx.input(k) for k in range(n)], input_zp=qs[0].zp, output_zp=qo.zp,
             output=(int(multiplier), int(shift)))


def _min_max(kiln_op: str):
    def convert(ctx: OpContext) -> None:
        same_quant(ctx, (0, 1))
        ctx.emit(kiln_op, [ctx.input(0), ctx.input(1)])
    return convert


converts("MAXIMUM", inputs=(2, 2))(_min_max("Maximum"))
converts("MINIMUM", inputs=(2, 2))(_min_max("Minimum"))


# -- comparisons, logic, selection ----------------------------------------------------------------

_COMPARISONS = {"EQUAL": "Equal", "NOT_EQUAL": "Equal", "LESS": "Less", "LESS_EQUAL": "LessOrEqual",
                "GREATER": "Greater", "GREATER_EQUAL": "GreaterOrEqual"}


def _compare(ctx: OpContext) -> None:
    # TFLite Micro rescales quantized operands to a common scale before comparing; with one
    # quantization on both that is a monotonic, exact map, so the stored values compare alike.
    if type_name(ctx) == "INT16":
        raise ctx.error("int16 is not supported: TFLite Micro's int16 comparison rescales with constants its "
                        "Prepare sets only for int8 (measured: every result false), which Kiln does not reproduce")
    if type_name(ctx) in QUANTIZED and ctx.tensor(0).quant != ctx.tensor(1).quant:
        raise ctx.error("quantized operands with different quantizations need TFLite Micro's rescaling "
                        "(no Kiln kernel for it)")
    kiln_op = _COMPARISONS[ctx.code]
    if ctx.code == "NOT_EQUAL":
        ctx.emit("Not", [step(ctx, "Equal", [ctx.input(0), ctx.input(1)], "equal")])
        return
    ctx.emit(kiln_op, [ctx.input(0), ctx.input(1)])


for _code in _COMPARISONS:
    converts(_code, inputs=(2, 2))(_compare)


@converts("LOGICAL_AND", inputs=(2, 2))
@converts("LOGICAL_OR", inputs=(2, 2))
def logical_binary(ctx: OpContext) -> None:
    ctx.emit({"LOGICAL_AND": "And", "LOGICAL_OR": "Or"}[ctx.code], [ctx.input(0), ctx.input(1)])


@converts("LOGICAL_NOT")
def logical_not(ctx: OpContext) -> None:
    ctx.emit("Not", [ctx.input(0)])


@converts("SELECT_V2", inputs=(3, 3))
def select(ctx: OpContext) -> None:
    same_quant(ctx, (1, 2))
    ctx.emit("Where", [ctx.input(0), ctx.input(1), ctx.input(2)])


_CAST_TYPES = {"FLOAT32": "float32", "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT64": "int64",
               "UINT8": "uint8", "BOOL": "bool"}


@converts("CAST")
def cast(ctx: OpContext) -> None:
    # TFLite casts the stored values (a quantization on either side is ignored).
    src, dst = type_name(ctx), ctx.out_tensor().type_name
    for t in (src, dst):
        if t not in _CAST_TYPES:
            raise ctx.error(f"cast from {src.lower()} to {dst.lower()} is not supported")
    if ctx.tensor(0).quant is not None or ctx.out_tensor().quant is not None:
        raise ctx.error("a CAST of quantized tensors is not supported (Kiln would rescale them)")
    ctx.emit("Cast", [ctx.input(0)], to=_CAST_TYPES[dst])


# -- normalisations -------------------------------------------------------------------------------

@converts("L2_NORMALIZATION")
def l2_normalization(ctx: OpContext) -> None:
    """x / max(sqrt(sum(x*x)), 1e-6) over the last axis, as TFLite Micro's float kernel; int8 is
    its integer kernel (which, as TFLM's Prepare, takes no fused activation)."""
    act = ctx.activation(ctx.options("L2NormOptions"))
    if type_name(ctx) == "INT8":
        if act != "none":
            raise ctx.error(f"a fused {act} on an int8 L2_NORMALIZATION is refused by TFLite Micro too")
        ctx.emit("QuantizedL2Normalization", [ctx.input(0)])
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    only_types(ctx, ("FLOAT32",))
    x = ctx.input(0)
    last = len(ctx.shape(0)) - 1
    sq = step(ctx, "Mul", [x, x], "square")
    total = step(ctx, "ReduceSum", [sq], "sum", axes=(last,), keepdims=True)
    norm = step(ctx, "Clip", [step(ctx, "Sqrt", [total], "norm")], "floor", min=1e-6, max=float("inf"))
    finish(ctx, "Div", [x, norm], act)


@converts("LOG_SOFTMAX")
def log_softmax(ctx: OpContext) -> None:
    """x - max - log(sum(exp(x - max))) over the last axis; int8 is TFLite Micro's kernel."""
    if type_name(ctx) == "INT8":
        ctx.emit("QuantizedLogSoftmax", [ctx.input(0)])
        return
    refuse_quantized(ctx, NEEDS_INT8_KERNEL)
    only_types(ctx, ("FLOAT32",))
    x = ctx.input(0)
    last = (len(ctx.shape(0)) - 1,)
    m = step(ctx, "ReduceMax", [x], "max", axes=last, keepdims=True)
    d = step(ctx, "Sub", [x, m], "shift")
    s = step(ctx, "ReduceSum", [step(ctx, "Exp", [d], "exp")], "sum", axes=last, keepdims=True)
    ctx.emit("Sub", [d, step(ctx, "Log", [s], "log")])
