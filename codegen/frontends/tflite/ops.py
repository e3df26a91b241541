"""One small converter per TFLite builtin, registered by builtin name (codegen/frontends/tflite/converter.py).

A converter reads the operator through an `OpContext` (inputs, constant inputs, builtin
options with schema defaults) and emits the Kiln node(s) of codegen/ops/README.md. Layouts
already agree (TFLite is NHWC with OHWI / 1HWC filters), so converters mostly rename
attributes and make padding explicit.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.tflite import compose, hybrid
from codegen.frontends.tflite.converter import (SAME, VALID, check_positive, check_rank, converts,
                                                explicit_pads)
from codegen.frontends.tflite.importer import OpContext
from codegen.ir.types import np_dtype
from codegen.ops.requantize import TARGETS as REQUANTIZE_TARGETS

def _axis(ctx: OpContext, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


# -- convolutions and fully connected ------------------------------------------------------------

def _weights(ctx: OpContext, k: int) -> str:
    """Input k as a weight value. A hybrid (dynamic-range) model stores int8 weights for float
    activations; Kiln runs those ops in float, so the weights are dequantized here (once)."""
    if not hybrid.is_hybrid_weight(ctx.imp.model, ctx.op, k):
        return ctx.input(k)
    t = ctx.tensor(k)
    folded = ctx.imp.folded
    if t.index not in folded:
        folded[t.index] = ctx.imp.b.const(ctx.imp.names[t.index], hybrid.dequantize(t))
    return folded[t.index]


@converts("CONV_2D", inputs=(2, 3))
def conv_2d(ctx: OpContext) -> None:
    o = ctx.options("Conv2DOptions")
    x = check_rank(ctx, 0, 4, "the input")
    w = check_rank(ctx, 1, 4, "the filter")
    if w[3] != x[3]:
        raise ctx.error(f"filter {list(w)} has {w[3]} input channels, the input {list(x)} has {x[3]} "
                        "(grouped convolution is not supported)")
    strides = check_positive(ctx, "strides", o["StrideH"], o["StrideW"])
    dilations = check_positive(ctx, "dilation factors", o["DilationHFactor"], o["DilationWFactor"])
    pads = explicit_pads(ctx, o["Padding"], x[1:3], w[1:3], strides, dilations)
    attrs = dict(strides=strides, dilations=dilations, pads=pads, activation=ctx.activation(o))
    filt = ctx.tensor(1)
    if ctx.imp.b.g.values[ctx.input(0)].dtype == "float32" and filt.dtype == "int8" \
            and filt.data is not None:
        # Hybrid (dynamic-range) convolution: LiteRT quantizes the input on the fly; Kiln
        # does the same, keeping the weights int8.
        ctx.emit("HybridConv2D", [ctx.input(0), ctx.input(1), ctx.input(2)], **attrs)
        return
    ctx.emit("Conv2D", [ctx.input(0), _weights(ctx, 1), ctx.input(2)], **attrs)


@converts("DEPTHWISE_CONV_2D", inputs=(2, 3))
def depthwise_conv_2d(ctx: OpContext) -> None:
    o = ctx.options("DepthwiseConv2DOptions")
    x = check_rank(ctx, 0, 4, "the input")
    w = check_rank(ctx, 1, 4, "the filter")
    if w[0] != 1 or x[3] == 0 or w[3] % x[3]:
        raise ctx.error(f"filter {list(w)} is not [1, KH, KW, C*M] for an input with {x[3]} channels")
    multiplier = w[3] // x[3]
    if o["DepthMultiplier"] not in (0, multiplier):
        raise ctx.error(f"depth_multiplier {o['DepthMultiplier']} disagrees with the filter "
                        f"({w[3]} channels for {x[3]} input channels)")
    strides = check_positive(ctx, "strides", o["StrideH"], o["StrideW"])
    dilations = check_positive(ctx, "dilation factors", o["DilationHFactor"], o["DilationWFactor"])
    pads = explicit_pads(ctx, o["Padding"], x[1:3], w[1:3], strides, dilations)
    ctx.emit("DepthwiseConv2D", [ctx.input(0), _weights(ctx, 1), ctx.input(2)], strides=strides,
             dilations=dilations, pads=pads, depth_multiplier=multiplier, activation=ctx.activation(o))


@converts("FULLY_CONNECTED", inputs=(2, 3))
def fully_connected(ctx: OpContext) -> None:
    o = ctx.options("FullyConnectedOptions")
    if o["WeightsFormat"] != 0:
        raise ctx.error("shuffled weights formats are not supported")
    check_rank(ctx, 1, 2, "the weights")
    if _hybrid_fully_connected(ctx, o):
        return
    ctx.emit("FullyConnected", [ctx.input(0), _weights(ctx, 1), ctx.input(2)],
             activation=ctx.activation(o), keep_dims=bool(o["KeepNumDims"]))


def _hybrid_fully_connected(ctx: OpContext, o: dict) -> bool:
    """A dynamic-range FULLY_CONNECTED (float rows, int8 weights with one scale, symmetric
    input quantization) as LiteRT computes it: each row quantized on the fly, int32 sums, one
    float scale per row. That is HybridConv2D's arithmetic for a 1x1 convolution over the
    rows as images [rows, 1, 1, K] (per image = per row), so it runs as one."""
    w = ctx.tensor(1)
    if not hybrid.is_hybrid_weight(ctx.imp.model, ctx.op, 1) or w.dtype != "int8" \
            or len(np.atleast_1d(w.quant.scale)) != 1 or o.get("AsymmetricQuantizeInputs"):
        return False
    x, (out_c, k) = ctx.shape(0), ctx.shape(1)
    rows = int(np.prod(x)) // k
    weights = ctx.imp.b.g.values[ctx.input(1)]
    w4 = compose.constant(ctx, "filter", np.asarray(weights.data).reshape(out_c, 1, 1, k), quant=weights.quant)
    x4 = compose.step(ctx, "Reshape", [ctx.input(0)], "rows", shape=(rows, 1, 1, k))
    y4 = compose.step(ctx, "HybridConv2D", [x4, w4, ctx.input(2)], "conv", strides=(1, 1), dilations=(1, 1),
                      pads=(0, 0, 0, 0), activation=ctx.activation(o))
    shape = (*x[:-1], out_c) if o["KeepNumDims"] else (rows, out_c)
    ctx.emit("Reshape", [y4], shape=shape)
    return True


@converts("BATCH_MATMUL", inputs=(2, 2))
def batch_matmul(ctx: OpContext) -> None:
    """adj_x / adj_y: the operand's last two axes swapped first (a Transpose; integer sums
    and the float sums over k do not change order)."""
    o = ctx.options("BatchMatMulOptions")
    operands = [ctx.input(0), _weights(ctx, 1)]
    for k, (adjoint, role) in enumerate(((o["AdjX"], "lhs_t"), (o["AdjY"], "rhs_t"))):
        rank = len(ctx.shape(k))
        if adjoint:
            if rank < 2:
                raise ctx.error(f"adj_{'xy'[k]} of an operand of rank {rank}")
            quant = ctx.imp.b.g.values[operands[k]].quant  # none on dequantized hybrid weights
            perm = (*range(rank - 2), rank - 1, rank - 2)
            operands[k] = compose.step(ctx, "Transpose", [operands[k]], role, quant=quant, perm=perm)
    ctx.emit("MatMul", operands)


# -- pooling and reductions ----------------------------------------------------------------------

def _pool(kiln_op: str):
    def convert(ctx: OpContext) -> None:
        o = ctx.options("Pool2DOptions")
        x = check_rank(ctx, 0, 4, "the input")
        kernel = check_positive(ctx, "filter size", o["FilterHeight"], o["FilterWidth"])
        strides = check_positive(ctx, "strides", o["StrideH"], o["StrideW"])
        pads = explicit_pads(ctx, o["Padding"], x[1:3], kernel, strides, (1, 1))
        ctx.emit(kiln_op, [ctx.input(0)], kernel=kernel, strides=strides, pads=pads,
                 activation=ctx.activation(o))
    return convert


converts("AVERAGE_POOL_2D")(_pool("AveragePool2D"))
converts("MAX_POOL_2D")(_pool("MaxPool2D"))


@converts("MEAN", inputs=(2, 2))
def mean(ctx: OpContext) -> None:
    o = ctx.options("ReducerOptions")
    rank = len(ctx.shape(0))
    axes = sorted({_axis(ctx, int(a), rank) for a in ctx.const(1, "axes").reshape(-1)})
    ctx.emit("Mean", [ctx.input(0)], axes=tuple(axes), keepdims=bool(o["KeepDims"]))


# -- elementwise ---------------------------------------------------------------------------------

def _binary(kiln_op: str, options: str):
    def convert(ctx: OpContext) -> None:
        o = ctx.options(options)
        ctx.emit(kiln_op, [ctx.input(0), ctx.input(1)], activation=ctx.activation(o))
    return convert


converts("ADD", inputs=(2, 2))(_binary("Add", "AddOptions"))
converts("SUB", inputs=(2, 2))(_binary("Sub", "SubOptions"))
converts("MUL", inputs=(2, 2))(_binary("Mul", "MulOptions"))


def _clip(lo: float, hi: float):
    def convert(ctx: OpContext) -> None:
        if ctx.tensor(0).type_name == "INT16":
            _clip_int16(ctx, lo, hi)
            return
        ctx.emit("Clip", [ctx.input(0)], min=lo, max=hi)
    return convert


def _clip_int16(ctx: OpContext, lo: float, hi: float) -> None:
    """int16 RELU / RELU6 with one quantization (no int16 Clip kernel): TFLite Micro clamps the
    stored values between the zero point and quantize(6) (its RELU rescales by exactly 1), so
    a Maximum and a Minimum with those stored constants."""
    compose.same_quant(ctx)
    q = ctx.tensor(0).quant
    if q is None or q.per_channel:
        raise ctx.error("int16 needs one quantization scale")

    def stored(role: str, v: float) -> str:  # TFLite Micro's FloatToQuantizedType: float32, half away
        r = float(np.float32(v) / np.float32(q.s))
        level = int(np.clip(q.zp + np.sign(r) * np.floor(abs(r) + 0.5), -32768, 32767))
        return compose.constant(ctx, role, np.array(level, np.int16), q)

    if hi == float("inf"):
        ctx.emit("Maximum", [ctx.input(0), stored("low", lo)])
        return
    x = compose.step(ctx, "Maximum", [ctx.input(0), stored("low", lo)], "low", quant=q)
    ctx.emit("Minimum", [x, stored("high", hi)])


converts("RELU")(_clip(0.0, float("inf")))
converts("RELU6")(_clip(0.0, 6.0))
converts("RELU_N1_TO_1")(_clip(-1.0, 1.0))


def _unary(kiln_op: str):
    def convert(ctx: OpContext) -> None:
        ctx.emit(kiln_op, [ctx.input(0)])
    return convert


converts("LOGISTIC")(_unary("Sigmoid"))
converts("TANH")(_unary("Tanh"))


@converts("QUANTIZE")
def quantize(ctx: OpContext) -> None:
    pair = (ctx.tensor(0).type_name, ctx.out_tensor().type_name)
    src, dst = pair[0].lower(), pair[1].lower()
    if dst in REQUANTIZE_TARGETS.get(src, ()):  # between integer types other than int8 -> int8
        ctx.emit("Requantize", [ctx.input(0)], to=dst)
        return
    if pair not in (("FLOAT32", "INT8"), ("INT8", "INT8")):
        raise ctx.error(f"{src} to {dst} is not supported (needs a kernel; Kiln quantizes float32 to int8 "
                        "and requantizes int8, uint8 and int16 as TFLite Micro does)")
    ctx.emit("Quantize", [ctx.input(0)])


@converts("DEQUANTIZE")
def dequantize(ctx: OpContext) -> None:
    t = ctx.tensor(0)
    if t.data is None and t.type_name in ("INT16", "UINT8"):
        _dequantize_wide(ctx)
        return
    if t.data is None:
        ctx.emit("Dequantize", [ctx.input(0)])
        return
    # A constant (float16 or quantized weights of a float model): fold to float32 now.
    data = t.data
    if data.dtype.kind != "f" and t.quant is None:
        raise ctx.error(f"constant '{t.name}' has no quantization parameters")
    ctx.emit_constant(data.astype(np.float32) if data.dtype.kind == "f" else hybrid.dequantize(t))


def _dequantize_wide(ctx: OpContext) -> None:
    """int16 / uint8 (no Dequantize kernel): float(q), minus the zero point, times the scale.
    TFLite Micro rounds double(scale) * (q - zp) once to float; the float32 product of those
    two exact operands is the same single rounding."""
    q = ctx.tensor(0).quant
    if q is None or q.per_channel:
        raise ctx.error("needs one quantization scale and zero point")
    x = compose.step(ctx, "Cast", [ctx.input(0)], "real", to="float32")
    x = compose.step(ctx, "Sub", [x, compose.constant(ctx, "zero_point", np.array(q.zp, np.float32))], "centred")
    ctx.emit("Mul", [x, compose.constant(ctx, "scale", np.array(q.s, np.float32))])


@converts("SOFTMAX")
def softmax(ctx: OpContext) -> None:
    o = ctx.options("SoftmaxOptions")
    ctx.emit("Softmax", [ctx.input(0)], axis=-1, beta=float(o["Beta"]))


# -- data movement -------------------------------------------------------------------------------

@converts("RESHAPE", inputs=(1, 2))
@converts("SQUEEZE")
@converts("EXPAND_DIMS", inputs=(2, 2))
def reshape(ctx: OpContext) -> None:
    # The new shape is static: take it from the output tensor rather than from the options.
    ctx.emit("Reshape", [ctx.input(0)], shape=ctx.static_out_shape())


@converts("CONCATENATION", inputs=(1, None))
def concatenation(ctx: OpContext) -> None:
    o = ctx.options("ConcatenationOptions")
    if ctx.activation(o) != "none":
        raise ctx.error("a fused activation on CONCATENATION is not supported")
    rank = len(ctx.shape(0))
    ctx.emit("Concat", [ctx.input(k) for k in range(len(ctx.op.inputs))], axis=_axis(ctx, o["Axis"], rank))


@converts("TRANSPOSE", inputs=(2, 2))
def transpose(ctx: OpContext) -> None:
    rank = len(ctx.shape(0))
    perm = [int(p) for p in ctx.const(1, "perm").reshape(-1)]
    if sorted(_axis(ctx, p, rank) for p in perm) != list(range(rank)):
        raise ctx.error(f"perm {perm} is not a permutation of {rank} axes")
    ctx.emit("Transpose", [ctx.input(0)], perm=tuple(_axis(ctx, p, rank) for p in perm))


@converts("PAD", inputs=(2, 2))
@converts("PADV2", inputs=(2, 3))
def pad(ctx: OpContext) -> None:
    rank = len(ctx.shape(0))
    paddings = ctx.const(1, "paddings")
    if paddings.shape != (rank, 2):
        raise ctx.error(f"paddings have shape {list(paddings.shape)}, expected [{rank}, 2]")
    if np.any(paddings < 0):
        raise ctx.error(f"negative paddings {paddings.tolist()}")
    if ctx.tensor(0).type_name in ("INT16", "INT32"):
        _pad_by_concat(ctx, paddings)
        return
    pads = tuple(int(p) for p in paddings[:, 0]) + tuple(int(p) for p in paddings[:, 1])
    ctx.emit("Pad", [ctx.input(0)], pads=pads, value=_pad_value(ctx))


def _pad_by_concat(ctx: OpContext, paddings: np.ndarray) -> None:
    """int16 / int32 (no Pad kernel): per padded axis, a Concat of constant blocks of the pad's
    stored value around the input, which is what TFLite Micro writes (0, or PADV2's value)."""
    compose.same_quant(ctx)
    t = ctx.tensor(0)
    fill = 0 if ctx.tensor(2) is None else ctx.const(2, "constant_values").reshape(-1)[0]
    axes = [a for a in range(len(paddings)) if paddings[a].any()]
    x, shape = ctx.input(0), list(ctx.shape(0))
    if not axes:
        ctx.emit("Reshape", [x], shape=tuple(shape))
        return
    for a in axes:
        pieces = []
        for side, n in enumerate(int(p) for p in paddings[a]):
            if side == 1:
                pieces.append(x)
            if n:
                block = np.full(shape[:a] + [n] + shape[a + 1:], fill, np_dtype(t.dtype))
                pieces.append(compose.constant(ctx, f"pad{a}_{side}", block, quant=t.quant))
        shape[a] += int(paddings[a].sum())
        if a == axes[-1]:
            ctx.emit("Concat", pieces, axis=a)
        else:
            x = compose.step(ctx, "Concat", pieces, f"pad{a}", quant=t.quant, axis=a)


def _pad_value(ctx: OpContext) -> float:
    """The real padding value. A quantized PADV2 pads with the raw stored integer, so it is
    read back through the output's quantization, which the Pad op re-applies exactly."""
    if ctx.tensor(2) is None:
        return 0.0
    value = ctx.const(2, "constant_values")
    if value.size != 1:
        raise ctx.error(f"constant_values has {value.size} elements, expected 1")
    q = ctx.out_tensor().quant
    if value.dtype.kind == "f" or q is None:
        return float(value.reshape(-1)[0])
    return float(q.s * (int(value.reshape(-1)[0]) - q.zp))


# The other families register themselves on import (they use `converts` and the helpers above).
