"""onnxruntime's quantized contrib operators (domain com.microsoft), as its quantizers write
them in the QOperator format: QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearConcat, QLinearWhere, QLinearSoftmax, QLinearSigmoid,
QLinearLeakyRelu, QGemm, and its QuantizeLinear / DequantizeLinear; also QLinearReduceMean,
which its contrib schema defines though its quantizer does not write it.

Each becomes Kiln's int8 op on int8 tensors (uint8 shifted by -128, see ops_quant), so it runs
on the same int8 kernels (and their DSP / Helium / NEON variants) as a TFLite model. By default
their arithmetic is TFLite's (fixed-point requantization), which differs from onnxruntime's float
requantization by one step where a value falls near a rounding boundary: `kiln verify` judges
these outputs in LSB. `--numerics onnxruntime` computes them as onnxruntime does
(codegen/kernels/onnxruntime/). QLinearSigmoid and QLinearLeakyRelu, which onnxruntime computes by a
256-entry table of the float function, are such a table too (QuantizedActivation).
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_quant import (_UINT8_SHIFT, _activation_quant, _bias, _int8_input,
                                              _int8_weights, convert_dequantize, convert_quantize)
from codegen.frontends.onnx.ops_shape import norm_axis
from codegen.frontends.onnx.ops_spatial import window
from codegen.frontends.onnx.reader import OnnxNode
from codegen.ir.types import Quant

MS = "com.microsoft."

converter(MS + "QuantizeLinear")(convert_quantize)
converter(MS + "DequantizeLinear")(convert_dequantize)


def _operand(ctx: ConvertContext, node: OnnxNode, index: int, s: int, z: int) -> str:
    """Input `index` as a Kiln int8 value quantized by inputs s (scale) and z (zero point): a
    computed int8 activation, or a constant made one (uint8 shifted by -128)."""
    data = ctx.const(node.input(index))
    if data is None:
        return _int8_input(ctx, node, index, s, z)
    if data.dtype not in (np.int8, np.uint8):
        raise node.error(f"input {index} is {data.dtype}; int8 or uint8 expected")
    q = _activation_quant(ctx, node, s, z, default_uint8=data.dtype == np.uint8)
    shift = _UINT8_SHIFT if data.dtype == np.uint8 else 0
    name = ctx.new_const(ctx.fresh(f"{node.name}_in{index}"), (data.astype(np.int64) - shift).astype(np.int8))
    ctx.b.g.values[name].quant = q
    return name


def _output_quant(ctx: ConvertContext, node: OnnxNode, s: int, z: int) -> Quant:
    return _activation_quant(ctx, node, s, z, default_uint8=False)


@converter(MS + "QLinearAdd", MS + "QLinearMul")
def convert_qlinear_binary(ctx, node):
    """C = A + B (A * B), broadcasting: inputs A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp."""
    a, b = _operand(ctx, node, 0, 1, 2), _operand(ctx, node, 3, 4, 5)
    op = "Add" if node.op_type == "QLinearAdd" else "Mul"
    ctx.add(node, op, [a, b], out=node.outputs[0], quant=_output_quant(ctx, node, 6, 7))


def _nchw_check(ctx: ConvertContext, node: OnnxNode) -> tuple[int, ...]:
    shape = ctx.shape(node.input(0))
    if node.attr("channels_last", 0):
        raise node.error("channels_last=1 is not supported (NCHW only)")
    return shape


@converter(MS + "QLinearGlobalAveragePool")
def convert_qlinear_global_avgpool(ctx, node):
    """The int8 Mean over the spatial axes of NCHW: X, x_scale, x_zp, y_scale, y_zp."""
    rank = len(_nchw_check(ctx, node))
    if rank < 3:
        raise node.error(f"input must have spatial dimensions, got rank {rank}")
    x = _operand(ctx, node, 0, 1, 2)
    ctx.add(node, "Mean", [x], out=node.outputs[0], quant=_output_quant(ctx, node, 3, 4),
            axes=tuple(range(2, rank)), keepdims=True)


@converter(MS + "QLinearAveragePool")
def convert_qlinear_avgpool(ctx, node):
    """The average of each window, requantized once as onnxruntime does: an int8 Mean over
    the window axes of a reshaped NCHW tensor where windows tile the image (kernel = strides, no
    padding; TFLite's int8 Mean takes any output quantization), else an int8 AveragePool2D in
    NHWC (which keeps the input's quantization, TFLite's constraint) and a requantization.
    Kiln's (TFLite's) int8 average divides by the window's elements inside the image:
    count_include_pad=0."""
    shape = _nchw_check(ctx, node)
    if len(shape) != 4:
        raise node.error(f"input must be NCHW (rank 4), got shape {list(shape)}")
    win = window(node, shape[2:], [int(k) for k in node.attr("kernel_shape")])
    if node.attr("count_include_pad", 0) and any(win.pads):
        raise node.error("count_include_pad=1 with padding is not supported by the int8 average pool")
    if node.attr("ceil_mode", 0) or win.dilations != (1, 1):
        raise node.error("ceil_mode=1 or dilations are not supported by the int8 average pool")
    x = _operand(ctx, node, 0, 1, 2)
    xq, yq = ctx.b.g.values[x].quant, _output_quant(ctx, node, 3, 4)
    (n, c, h, w), (kh, kw) = shape, win.kernel
    if xq != yq and win.strides == win.kernel and not any(win.pads) and h % kh == 0 and w % kw == 0:
        tiles = ctx.add(node, "Reshape", [x], role="windows", quant=xq, shape=(n, c, h // kh, kh, w // kw, kw))
        ctx.add(node, "Mean", [tiles], out=node.outputs[0], quant=yq, axes=(3, 5), keepdims=False)
        return
    nhwc = ctx.add(node, "Transpose", [x], role="to_nhwc", quant=xq, perm=(0, 2, 3, 1))
    y = ctx.add(node, "AveragePool2D", [nhwc], quant=xq, kernel=win.kernel, strides=win.strides, pads=win.pads)
    if xq != yq:
        y = ctx.add(node, "Quantize", [y], role="requantized", quant=yq)
    ctx.add(node, "Transpose", [y], role="to_nchw", out=node.outputs[0], quant=yq, perm=(0, 3, 1, 2))


@converter(MS + "QLinearConcat")
def convert_qlinear_concat(ctx, node):
    """Y_scale, Y_zp, then (X, X_scale, X_zp) per input: each input requantized to Y's
    quantization where it differs (an int8 -> int8 Quantize), then an int8 Concat."""
    yq = _output_quant(ctx, node, 0, 1)
    if (len(node.inputs) - 2) % 3 or len(node.inputs) < 5:
        raise node.error(f"{len(node.inputs)} inputs: expected Y_scale, Y_zero_point and triples "
                         "(X, X_scale, X_zero_point)")
    ins = []
    for k in range(2, len(node.inputs), 3):
        ins.append(_requantized(ctx, node, _operand(ctx, node, k, k + 1, k + 2), yq, f"requantize{k // 3}"))
    axis = norm_axis(node, int(node.attr("axis")), len(ctx.shape(node.input(2))))
    ctx.add(node, "Concat", ins, out=node.outputs[0], quant=yq, axis=axis)


def _requantized(ctx: ConvertContext, node: OnnxNode, x: str, quant: Quant, role: str) -> str:
    """x on the grid of `quant`: as it is, or through an int8 -> int8 Quantize."""
    return x if ctx.b.g.values[x].quant == quant else ctx.add(node, "Quantize", [x], role=role, quant=quant)


@converter(MS + "QLinearWhere")
def convert_qlinear_where(ctx, node):
    """condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp: X and Y requantized to Z's
    quantization where it differs, then an int8 Where (which moves bytes)."""
    zq = _output_quant(ctx, node, 7, 8)
    x = _requantized(ctx, node, _operand(ctx, node, 1, 2, 3), zq, "x_requantized")
    y = _requantized(ctx, node, _operand(ctx, node, 4, 5, 6), zq, "y_requantized")
    cond = ctx.const(node.input(0))
    c = ctx.weight(node, "condition", cond) if cond is not None else ctx.kiln(node.input(0))
    ctx.add(node, "Where", [c, x, y], out=node.outputs[0], quant=zq)


@converter(MS + "QLinearSoftmax")
def convert_qlinear_softmax(ctx, node):
    """int8 Softmax along the last axis (where onnxruntime's opset < 13 and >= 13 forms agree):
    X, X_scale, x_zp, y_scale, y_zp. The int8 kernel (TFLite's) takes the output quantization
    onnxruntime's quantizer gives softmax: scale 1/256, zero point 0 (uint8) or -128 (int8)."""
    rank = len(ctx.shape(node.input(0)))
    if norm_axis(node, int(node.attr("axis", -1)), rank) != rank - 1:
        raise node.error("only the last axis is supported")
    x = _operand(ctx, node, 0, 1, 2)
    ctx.add(node, "Softmax", [x], out=node.outputs[0], quant=_output_quant(ctx, node, 3, 4), axis=-1)


@converter(MS + "QLinearReduceMean")
def convert_qlinear_reduce_mean(ctx, node):
    """The int8 Mean over `axes` (required, as `keepdims`): data, data_scale, data_zp,
    reduced_scale, reduced_zp. onnxruntime defines the op but has no CPU kernel for it, so
    there is no onnxruntime arithmetic to match: TFLite's int8 Mean in either numerics."""
    rank = len(ctx.shape(node.input(0)))
    axes = node.attr("axes")
    if not axes:
        raise node.error("axes is required")
    x = _operand(ctx, node, 0, 1, 2)
    ctx.add(node, "Mean", [x], out=node.outputs[0], quant=_output_quant(ctx, node, 3, 4),
            axes=tuple(sorted({norm_axis(node, int(a), rank) for a in axes})),
            keepdims=bool(node.attr("keepdims", 1)))


@converter(MS + "QLinearSigmoid", MS + "QLinearLeakyRelu")
def convert_qlinear_lookup(ctx, node):
    """X, X_scale, X_zp, Y_scale, Y_zp: the float function between the two quantizations,
    tabulated over the 256 inputs as onnxruntime does (an int8 QuantizedActivation: one table
    lookup per element)."""
    x = _operand(ctx, node, 0, 1, 2)
    function = "sigmoid" if node.op_type == "QLinearSigmoid" else "leaky_relu"
    ctx.add(node, "QuantizedActivation", [x], out=node.outputs[0], quant=_output_quant(ctx, node, 3, 4),
            function=function, alpha=float(node.attr("alpha", 0.01)))


@converter(MS + "QGemm")
def convert_qgemm(ctx, node):
    """Y = A B' + C with constant B: an int8 FullyConnected. Inputs A, a_scale, a_zp, B,
    b_scale, b_zp, C (int32 at a_scale * b_scale), y_scale, y_zp; alpha 1, transA 0."""
    if float(node.attr("alpha", 1.0)) != 1.0 or node.attr("transA", 0):
        raise node.error("alpha != 1 or transA=1 is not supported")
    if not node.input(7):
        raise node.error("a float output (no y_scale) is not supported")
    if len(ctx.shape(node.input(0))) != 2:
        raise node.error(f"A must be 2-D, got {list(ctx.shape(node.input(0)))}")
    a = _int8_input(ctx, node, 0, 1, 2)
    w, w_scale = _int8_weights(ctx, node, 3, 4, 5)
    if w.ndim != 2:
        raise node.error(f"B of shape {list(w.shape)} is not a matrix")
    w = w if node.attr("transB", 0) else w.T  # [N, K]
    n = w.shape[0]
    if w_scale.size not in (1, n):
        raise node.error(f"{w_scale.size} scales for B with {n} columns")
    wq = ctx.new_const(ctx.fresh(f"{node.name}_weight"), np.ascontiguousarray(w))
    ctx.b.g.values[wq].quant = Quant.of(w_scale if w_scale.size > 1 else float(w_scale[0]), 0, 0)
    a_scale = ctx.b.g.values[a].quant.s
    bias = _bias(ctx, node, 6, a_scale * np.broadcast_to(w_scale, (n,)))
    ctx.add(node, "FullyConnected", [a, wq] + bias, out=node.outputs[0], quant=_output_quant(ctx, node, 7, 8))
