"""Elementwise ops and activations: arithmetic, comparisons, logic, float functions, Clip,
Sigmoid, Tanh, Softmax.

Variadic ONNX ops (Sum, Mean, Min, Max) become chains of binary Kiln ops. Float functions
with parameters (LeakyRelu's alpha, ...) carry the ONNX attribute names over unchanged.
"""

from __future__ import annotations

import numpy as np
import onnx

from codegen.frontends.onnx.context import ConvertContext, converter, declared_attrs
from codegen.frontends.onnx.ops_shape import norm_axis
from codegen.frontends.onnx.reader import ELEM_TYPE_NAMES, OnnxNode
from codegen.ir.types import C_TYPES, compute_dtype
from codegen.ops.cast import cast_array

# Clip's bounds before opset 11 default to the float32 range, which clamps nothing finite.
FLT_MAX = float(np.finfo(np.float32).max)


def _binary(ctx: ConvertContext, node: OnnxNode, op: str, a: str, b: str) -> None:
    ctx.add(node, op, [a, b], out=node.outputs[0])


@converter("Add", "Sub", "Mul")
def convert_binary(ctx, node):
    _binary(ctx, node, node.op_type, ctx.kiln(node.input(0)), ctx.kiln(node.input(1)))


@converter("Div")
def convert_div(ctx, node):
    """x / c is x * (1/c) when every 1/c is exact (c a power of two), else a Div."""
    divisor = ctx.const(node.input(1))
    if divisor is not None and divisor.dtype == np.float32 and np.all(divisor != 0):
        mantissa, _ = np.frexp(divisor)
        if np.all(np.abs(mantissa) == 0.5):
            recip = ctx.weight(node, "reciprocal", (np.float32(1) / divisor).astype(np.float32))
            _binary(ctx, node, "Mul", ctx.kiln(node.input(0)), recip)
            return
    _binary(ctx, node, "Div", ctx.kiln(node.input(0)), ctx.kiln(node.input(1)))


@converter("Pow")
def convert_pow(ctx, node):
    """Kiln's Pow is float32: other exponents are converted to float32; an integer base is
    too, and the result converted back (ONNX gives Pow the base's dtype), exact while the
    powers fit float32's 24-bit mantissa."""
    base, exponent = node.input(0), node.input(1)
    a, constant = ctx.kiln(base), ctx.const(exponent)
    if ctx.dtype(exponent) == "float32":
        b = ctx.kiln(exponent)
    elif constant is not None:
        b = ctx.weight(node, "exponent", constant.astype(np.float32))
    else:
        b = ctx.add(node, "Cast", [ctx.kiln(exponent)], role="exponent", to="float32")
    if ctx.dtype(base) == "float32":
        _binary(ctx, node, "Pow", a, b)
        return
    a = ctx.add(node, "Cast", [a], role="base", to="float32")
    power = ctx.add(node, "Pow", [a, b], role="float32")
    ctx.add(node, "Cast", [power], out=node.outputs[0], to=ctx.dtype(base))


@converter("Mod")
def convert_mod(ctx, node):
    ctx.add(node, "Mod", [ctx.kiln(node.input(0)), ctx.kiln(node.input(1))], out=node.outputs[0],
            **declared_attrs(node, "Mod"))


# ONNX op -> Kiln op of the binary ops that map one to one.
BINARY = {"PRelu": "PRelu", "Equal": "Equal", "Less": "Less", "Greater": "Greater",
          "LessOrEqual": "LessOrEqual", "GreaterOrEqual": "GreaterOrEqual", "And": "And", "Or": "Or",
          "Xor": "Xor"}


@converter(*BINARY)
def convert_one_to_one_binary(ctx, node):
    _binary(ctx, node, BINARY[node.op_type], ctx.kiln(node.input(0)), ctx.kiln(node.input(1)))


@converter("Where")
def convert_where(ctx, node):
    ctx.add(node, "Where", [ctx.kiln(i) for i in node.inputs[:3]], out=node.outputs[0])


@converter("Sum", "Mean", "Min", "Max")
def convert_variadic(ctx, node):
    """A left-to-right chain of Add / Minimum / Maximum; Mean multiplies the sum by 1/n."""
    ins = [i for i in node.inputs if i]
    if not ins:
        raise node.error("has no inputs")
    op = {"Sum": "Add", "Mean": "Add", "Min": "Minimum", "Max": "Maximum"}[node.op_type]
    scale = node.op_type == "Mean" and len(ins) > 1
    if len(ins) == 1:
        ctx.alias(node.outputs[0], ins[0])
        return
    acc = ctx.kiln(ins[0])
    for k, name in enumerate(ins[1:], start=1):
        last = k == len(ins) - 1 and not scale
        acc = ctx.add(node, op, [acc, ctx.kiln(name)], role=f"{op.lower()}{k}" if not last else "",
                      out=node.outputs[0] if last else None)
    if scale:
        n = ctx.weight(node, "one_over_n", np.array(1.0 / len(ins), np.float32))
        ctx.add(node, "Mul", [acc, n], out=node.outputs[0])


def clip(ctx: ConvertContext, node: OnnxNode, lo: float, hi: float) -> None:
    """Kiln's Clip on float32 (and quantized int8); plain integers are Maximum then Minimum
    with constant bounds of their dtype (an infinite or out-of-range bound clamps nothing)."""
    x = node.input(0)
    dtype = ctx.dtype(x)
    if dtype == "float32" or (dtype == "int8" and ctx.value(x).quant is not None):
        ctx.add(node, "Clip", [ctx.kiln(x)], out=node.outputs[0], min=float(lo), max=float(hi))
        return
    info = np.iinfo(np.dtype(dtype))
    acc = ctx.kiln(x)
    steps = [(op, bound) for op, bound, clamps in (("Maximum", lo, lo > info.min), ("Minimum", hi, hi < info.max))
             if clamps]
    if not steps:
        ctx.alias(node.outputs[0], x)
    for k, (op, bound) in enumerate(steps):
        limit = ctx.weight(node, op.lower(), np.array(int(bound), dtype))
        acc = ctx.add(node, op, [acc, limit], role=op.lower(), out=node.outputs[0] if k == len(steps) - 1 else None)


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


# ONNX ops that are the Kiln op of the same name, attributes included (float functions): the
# op declares the attributes, with ONNX's names and defaults (codegen/ops/<op>.py).
UNARY = ("Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign",
         "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
         "Softplus", "Softsign", "HardSwish", "Mish", "Not", "LeakyRelu", "Elu", "Celu", "ThresholdedRelu",
         "Swish", "Selu", "HardSigmoid", "Shrink", "Gelu", "IsNaN", "IsInf")


@converter(*UNARY)
def convert_unary(ctx, node):
    ctx.add(node, node.op_type, [ctx.kiln(node.input(0))], out=node.outputs[0], **declared_attrs(node, node.op_type))


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


# ONNX tensor element type -> Kiln dtype (the storage-only ones, such as float16, computed as
# compute_dtype says: graph inputs and Cast results are converted on the way in).
ONNX_DTYPES = {elem: {"float": "float32", "double": "float64"}.get(name, name)
               for elem, name in ELEM_TYPE_NAMES.items()
               if {"float": "float32", "double": "float64"}.get(name, name) in C_TYPES}
# ONNX tensor element type -> the Kiln dtype that computes it.
KILN_DTYPES = {elem: compute_dtype(dtype) for elem, dtype in ONNX_DTYPES.items()}


def cast_to(ctx: ConvertContext, node: OnnxNode, x: str, to: str, saturate: bool = True,
            round_mode: str = "up") -> None:
    """node.outputs[0] = Cast(x) to ONNX dtype `to` (a Kiln dtype name, storage ones included).

    A storage-only target (float16, float64, int4, ...) is a round trip through it and back to
    its compute dtype, so that the values are those of the target and Kiln computes on."""
    out, compute = node.outputs[0], compute_dtype(to)
    if compute != to:
        ctx.onnx_types[out] = to
    if compute == to or to == "float64":  # float64 has no values float32 lacks for Kiln
        if ctx.dtype(x) == compute:
            ctx.alias(out, x)
        else:
            ctx.add(node, "Cast", [ctx.kiln(x)], out=out, to=compute, saturate=saturate)
        return
    xin = ctx.kiln(x)
    if compute == "float32" and ctx.dtype(x) != "float32":
        xin = ctx.add(node, "Cast", [xin], role="to_float32", to="float32")
    stored = ctx.add(node, "Cast", [xin], role=f"to_{to}", to=to, saturate=saturate, round_mode=round_mode)
    ctx.add(node, "Cast", [stored], out=out, to=compute)


@converter("Cast")
def convert_cast(ctx, node):
    to = node.attr("to")
    if to not in ONNX_DTYPES:
        raise node.error(f"cast to {ELEM_TYPE_NAMES.get(to, to)} is not supported "
                         f"(Kiln has {', '.join(sorted(set(ONNX_DTYPES.values())))})")
    cast_to(ctx, node, node.input(0), ONNX_DTYPES[to], bool(node.attr("saturate", 1)), node.attr("round_mode", "up"))


@converter("CastLike")
def convert_castlike(ctx, node):
    """Input 1 gives only its dtype: with a constant input 0, the result is a constant too."""
    to, saturate = ctx.onnx_dtype(node.input(1)), bool(node.attr("saturate", 1))
    data = ctx.const(node.input(0))
    if data is not None:
        ctx.bind_const(node.outputs[0], cast_array(data, to, saturate))
        return
    cast_to(ctx, node, node.input(0), to, saturate)
