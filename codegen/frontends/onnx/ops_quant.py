"""Quantized ONNX: QuantizeLinear / DequantizeLinear (QDQ format) and QLinearConv /
QLinearMatMul (QOperator format), on Kiln's int8 tensors.

Kiln keeps quantization on values, not on ops: a QuantizeLinear becomes a Quantize whose
int8 output carries the scale and zero point, a DequantizeLinear a Dequantize of such a
value. The pass `fold_qdq` later turns Dequantize -> float op -> Quantize into the int8 op.
(DequantizeLinear of constant weights is computed at import time like every constant node;
fold_qdq recovers the int8 weights from those exact float values.)

uint8 activations (onnxruntime's default QUInt8) are stored as int8 with the zero point
shifted by -128: q_u8 = clamp(round(x / s) + zp, 0, 255) is exactly q_s8 + 128 with
q_s8 = clamp(round(x / s) + zp - 128, -128, 127), and (q_u8 - zp) = (q_s8 - (zp - 128)), so
every quantized op computes the same real values. Per-axis scales are accepted only on
constant weights of QLinearConv / QLinearMatMul.

What is not such an int8 activation is plain float32 arithmetic, as ONNX defines the ops:
(De)QuantizeLinear to or from other types (int16, int4, float8, ...), per-axis, blocked or
computed scales, graph outputs (the user wants the quantized bytes); QLinearConv and
QLinearMatMul on uint8 graph inputs or asymmetric weights (integer products exact in float32
while their sums stay below 2^24).
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import onnx

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_elementwise import ONNX_DTYPES, cast_to
from codegen.frontends.onnx.ops_shape import norm_axis
from codegen.frontends.onnx.ops_spatial import window
from codegen.frontends.onnx.reader import ELEM_TYPE_NAMES, OnnxNode
from codegen.ir.types import INTEGER_DTYPES, STORAGE_FLOATS, STORAGE_INTS, Quant, np_dtype
from codegen.ops.cast import cast_array

_UINT8_SHIFT = 128


def _zero_point(node: OnnxNode, zp: np.ndarray | None, default_uint8: bool) -> np.ndarray:
    """Zero point(s) as int64 on Kiln's int8 scale (uint8 shifted by -128)."""
    if zp is None:
        return np.array([-_UINT8_SHIFT if default_uint8 else 0], np.int64)
    if zp.dtype == np.int8:
        return zp.astype(np.int64).reshape(-1)
    if zp.dtype == np.uint8:
        return zp.astype(np.int64).reshape(-1) - _UINT8_SHIFT
    raise node.error(f"{zp.dtype} quantization is not supported (int8 and uint8 only)")


def _scales(ctx: ConvertContext, node: OnnxNode, index: int, what: str) -> np.ndarray:
    scale = ctx.require_const(node, index, what).astype(np.float64).reshape(-1)
    if not np.all(scale > 0):
        raise node.error(f"{what} {scale.tolist()} must be positive")
    return scale


def _activation_quant(ctx: ConvertContext, node: OnnxNode, s: int, z: int, default_uint8: bool) -> Quant:
    """The per-tensor Quant given by inputs s (scale) and z (zero point) of an activation."""
    if node.attr("block_size", 0):
        raise node.error("blocked quantization is not supported")
    scale = _scales(ctx, node, s, "scale")
    if scale.size != 1:
        raise node.error(f"per-axis quantization of an activation ({scale.size} scales) is not "
                         "supported (only of constant weights)")
    zp_data = ctx.const(node.input(z))
    if node.input(z) and zp_data is None:
        raise node.error(f"zero point (input {z}) must be a constant")
    zp = _zero_point(node, zp_data, default_uint8)
    if zp.size != 1:
        raise node.error(f"{zp.size} zero points for one scale")
    unsigned = default_uint8 if zp_data is None else zp_data.dtype == np.uint8
    return dataclasses.replace(Quant.of(float(scale[0]), int(zp[0])), unsigned=bool(unsigned))


def _is_qdq(ctx: ConvertContext, node: OnnxNode) -> bool:
    """Whether a (De)QuantizeLinear quantizes an activation the QDQ way: int8 or uint8, one
    constant scale and zero point. Anything else is plain arithmetic (_float_quantize)."""
    zp, scale = node.input(2), ctx.const(node.input(1))
    if node.op_type == "QuantizeLinear":
        out_type = node.attr("output_dtype", 0)
        integer = (ctx.onnx_dtype(zp) in ("int8", "uint8") if zp else
                   out_type in (0, onnx.TensorProto.INT8, onnx.TensorProto.UINT8))
        integer = integer and node.outputs[0] not in ctx.graph_outputs  # the user wants its bytes
    else:
        x = ctx.b.g.values[ctx.kiln(node.input(0))]
        integer = ctx.onnx_dtype(node.input(0)) == "int8" and not (x.quant is None and x.name in ctx.b.g.inputs)
    return (integer and scale is not None and scale.size == 1 and not node.attr("block_size", 0)
            and (not zp or ctx.const(zp) is not None))


def _along_axis(ctx: ConvertContext, node: OnnxNode, index: int, rank: int, role: str) -> str:
    """Input `index` (a scale or zero point) as float32, shaped to broadcast along `axis`."""
    name = node.input(index)
    per_axis = ctx.shape(name) not in ((), (1,))
    block = int(node.attr("block_size", 0) or 0)

    def trailing_ones() -> tuple[int, ...]:
        return (1,) * (rank - norm_axis(node, int(node.attr("axis", 1)), rank) - 1)

    data = ctx.const(name)
    if data is not None:
        data = cast_array(data, "float32")
        if block:  # one value per block of `block` elements along the axis: repeated to the input's shape
            axis = norm_axis(node, int(node.attr("axis", 1)), rank)
            if data.ndim != rank:
                raise node.error(f"blocked {role} of shape {list(data.shape)} for an input of rank {rank}")
            return ctx.weight(node, role, np.repeat(data, block, axis=axis)[tuple(
                slice(0, d) for d in ctx.shape(node.input(0)))])
        return ctx.weight(node, role, data.reshape((-1, *trailing_ones())) if per_axis else data)
    if block:
        raise node.error(f"blocked quantization needs a constant {role}")
    value = ctx.kiln(name)
    if ctx.dtype(name) != "float32":
        value = ctx.add(node, "Cast", [value], role=f"{role}_float32", to="float32")
    if per_axis:
        value = ctx.add(node, "Reshape", [value], role=f"{role}_axis", shape=(ctx.shape(name)[0], *trailing_ones()))
    return value


def _float_quantize(ctx: ConvertContext, node: OnnxNode) -> None:
    """(De)QuantizeLinear as float32 arithmetic, as ONNX defines them: x = (q - zp) * scale,
    q = saturate(round_half_even(x / scale) + zp) (float8 and float4 targets: a Cast of x / scale)."""
    x = node.input(0)
    rank = len(ctx.shape(x))
    xf = ctx.kiln(x)
    if ctx.dtype(x) != "float32":
        xf = ctx.add(node, "Cast", [xf], role="to_float32", to="float32")
    scale = _along_axis(ctx, node, 1, rank, "scale")
    zp = _along_axis(ctx, node, 2, rank, "zero_point") if node.input(2) else None
    if node.op_type == "DequantizeLinear":
        if zp is not None:
            xf = ctx.add(node, "Sub", [xf, zp], role="minus_zero_point")
        ctx.add(node, "Mul", [xf, scale], out=node.outputs[0])
        return
    out_type = node.attr("output_dtype", 0)
    if node.input(2):
        target = ctx.onnx_dtype(node.input(2))
    elif out_type and out_type not in ONNX_DTYPES:
        raise node.error(f"quantization to {ELEM_TYPE_NAMES.get(out_type, out_type)} is not supported")
    else:
        target = ONNX_DTYPES.get(out_type, "uint8")
    _store_quantized(ctx, node, ctx.add(node, "Div", [xf, scale], role="scaled"), zp, target)


def _store_quantized(ctx: ConvertContext, node: OnnxNode, q: str, zp: str | None, target: str) -> None:
    """node.outputs[0] = saturate(round_half_even(q) + zp) as `target` (a float8 or float4
    target: q cast to it)."""
    if target in INTEGER_DTYPES or target in STORAGE_INTS:
        q = ctx.add(node, "Round", [q], role="rounded")
        if zp is not None:
            q = ctx.add(node, "Add", [q, zp], role="plus_zero_point")
        info = ml_dtypes.iinfo(np_dtype(target))
        q = ctx.add(node, "Clip", [q], role="saturated", min=float(info.min), max=float(info.max))
    elif target not in STORAGE_FLOATS:
        raise node.error(f"quantization to {target} is not supported")
    tmp = ctx.fresh(f"{node.name}_float")
    ctx.bind(tmp, q)
    cast_to(ctx, node, tmp, target, bool(node.attr("saturate", 1)))


def _centered(ctx: ConvertContext, node: OnnxNode, index: int, zp_index: int, zp_shape: tuple[int, ...]) -> str:
    """The ONNX name of input `index` minus its zero point in float32 (exact for 8-bit data);
    a per-channel zero point is reshaped to `zp_shape`. A zero point computed at run time
    (DynamicQuantizeLinear's) must be a scalar."""
    name, zp = node.input(index), ctx.const(node.input(zp_index))
    runtime_zp = bool(node.input(zp_index)) and zp is None
    if runtime_zp and int(np.prod(ctx.shape(node.input(zp_index)), dtype=np.int64)) != 1:
        raise node.error(f"zero point (input {zp_index}) computed at run time must be a scalar")
    zp_f = np.zeros(1, np.float32) if zp is None else cast_array(zp, "float32")
    zp_f = zp_f.reshape(zp_shape) if zp_f.size > 1 else zp_f.reshape(())
    centered = ctx.fresh(f"{node.name}_in{index}_centered")
    data = ctx.const(name)
    if data is not None and not runtime_zp:
        ctx.bind_const(centered, cast_array(data, "float32") - zp_f)
        return centered
    x = ctx.kiln(name) if data is None else ctx.weight(node, f"in{index}", cast_array(data, "float32"))
    quant = ctx.b.g.values[x].quant
    x = ctx.add(node, "Cast", [x], role=f"in{index}_float32", to="float32")
    if quant is not None and not quant.per_channel:  # int8 on Kiln's side (uint8 shifted): its own zero point
        zero = ctx.weight(node, f"zero_point{index}", np.array(quant.zp, np.float32))
    elif runtime_zp:
        zero = ctx.add(node, "Cast", [ctx.kiln(node.input(zp_index))], role=f"zero_point{index}", to="float32")
        zero = ctx.add(node, "Reshape", [zero], role=f"zero_point{index}_scalar", shape=())
    else:
        zero = ctx.weight(node, f"zero_point{index}", zp_f)
    ctx.bind(centered, ctx.add(node, "Sub", [x, zero], role=f"in{index}_centered"))
    return centered


def _float_qlinear(ctx: ConvertContext, node: OnnxNode, op: str, attrs: dict, w_zp_shape: tuple[int, ...],
                   bias: np.ndarray | None) -> None:
    """QLinearConv / QLinearMatMul as ONNX's reference computes them, in float32: the integer
    product of the centered inputs (exact while sums stay below 2^24), + bias, times
    a_scale * b_scale / y_scale, rounded, + y_zero_point, saturated. For what Kiln's int8
    kernels do not take: uint8 runtime inputs, asymmetric weights."""
    from codegen.frontends.onnx.context import CONVERTERS

    rank = len(ctx.shape(node.input(0)))
    a = _centered(ctx, node, 0, 2, ())
    w = _centered(ctx, node, 3, 5, w_zp_shape)
    product = ctx.fresh(f"{node.name}_integer_product")
    CONVERTERS[op](ctx, OnnxNode(op, f"{node.name}_{op.lower()}", [a, w], [product], attrs))
    c = ctx.kiln(product)
    if bias is not None:
        c = ctx.add(node, "Add", [c, ctx.weight(node, "bias", bias.astype(np.float32).reshape(-1, *(1,) * (rank - 2)))],
                    role="plus_bias")
    scales = [np.asarray(ctx.require_const(node, i, "scale"), np.float32).reshape(-1) for i in (1, 4, 6)]
    m = scales[0] * scales[1] / scales[2]
    m = m.reshape(-1, *(1,) * (rank - 2)) if op == "Conv" and m.size > 1 else m.reshape(-1 if m.size > 1 else ())
    d = ctx.add(node, "Mul", [c, ctx.weight(node, "requantize", m)], role="requantized")
    zp = ctx.const(node.input(7))
    target = ctx.onnx_dtype(node.input(7)) if node.input(7) else ctx.onnx_dtype(node.input(0))
    zp_f = cast_array(zp, "float32").reshape(()) if zp is not None else None
    quant = None
    if target in ("int8", "uint8") and zp_f is not None and node.outputs[0] not in ctx.graph_outputs:
        # an activation other quantized ops read: Kiln's int8 with its quantization (uint8 shifted)
        zp_f = zp_f - np.float32(_UINT8_SHIFT if target == "uint8" else 0)
        target, quant = "int8", Quant.of(float(scales[2][0]), int(zp_f))
    zp_w = ctx.weight(node, "y_zero_point", zp_f) if zp_f is not None else None
    _store_quantized(ctx, node, d, zp_w, target)
    if quant is not None:
        ctx.value(node.outputs[0]).quant = quant


@converter("QuantizeLinear")
def convert_quantize(ctx, node):
    """float -> int8 (uint8 output: int8 with the zero point shifted, see the module doc);
    other targets, per-axis or computed scales: plain float arithmetic (_float_quantize)."""
    if not _is_qdq(ctx, node):
        _float_quantize(ctx, node)
        return
    out_type = node.attr("output_dtype", 0)
    zp = ctx.const(node.input(2))
    default_uint8 = out_type != onnx.TensorProto.INT8 and (zp is None or zp.dtype == np.uint8)
    q = _activation_quant(ctx, node, 1, 2, default_uint8)
    x = node.input(0)
    if ctx.dtype(x) != "float32":
        raise node.error(f"input is {ctx.dtype(x)}; only float32 is quantized")
    ctx.add(node, "Quantize", [ctx.kiln(x)], out=node.outputs[0], quant=q)


@converter("DequantizeLinear")
def convert_dequantize(ctx, node):
    """A Dequantize of a QDQ int8 tensor; of anything else, float arithmetic."""
    x = node.input(0)
    if not _is_qdq(ctx, node):
        _float_quantize(ctx, node)
        return
    q = _activation_quant(ctx, node, 1, 2, default_uint8=False)
    value = ctx.b.g.values[ctx.kiln(x)]
    zp_data = ctx.const(node.input(2))
    if zp_data is None and value.quant is not None and value.quant.zp == -_UINT8_SHIFT:
        q = Quant.of(q.s, -_UINT8_SHIFT)  # a uint8 tensor with the default zero point 0
    if value.quant is None:
        value.quant = q
    elif value.quant != q:
        raise node.error(f"scale/zero point ({q.s:g}, {q.zp}) differ from those of '{x}' "
                         f"({value.quant.scale[0]:g}, {value.quant.zero_point[0]})")
    ctx.add(node, "Dequantize", [value.name], out=node.outputs[0])


# -- QOperator format ----------------------------------------------------------------------

def _int8_input(ctx: ConvertContext, node: OnnxNode, index: int, s: int, z: int) -> str:
    """The Kiln int8 value of a quantized activation input, checked against its (scale, zp)."""
    name = node.input(index)
    if ctx.is_const(name):
        raise node.error(f"input {index} ('{name}') is a constant; only computed activations are supported")
    q = _activation_quant(ctx, node, s, z, default_uint8=False)
    value = ctx.b.g.values[ctx.kiln(name)]
    if value.dtype == "int8" and value.quant is None:  # moved by an ONNX op (Transpose, ...)
        value.quant = q
    if value.dtype != "int8" or value.quant != q:
        raise node.error(f"input {index} ('{name}') is not the int8 tensor of scale {q.s:g}, "
                         f"zero point {q.zp} (it is {value.type_str()})")
    return value.name


def _int8_weights(ctx: ConvertContext, node: OnnxNode, w: int, s: int, z: int) -> tuple[np.ndarray, np.ndarray]:
    """Constant weights as symmetric int8 (uint8 with zero point 128 shifted) and their scales."""
    data = ctx.require_const(node, w, "weights")
    zp = _zero_point(node, ctx.const(node.input(z)), default_uint8=data.dtype == np.uint8)
    if data.dtype == np.uint8:
        data = data.astype(np.int64) - _UINT8_SHIFT
    elif data.dtype != np.int8:
        raise node.error(f"weights are {data.dtype}; int8 or uint8 expected")
    if np.any(zp != 0):
        raise node.error("weights must be symmetric (int8 zero point 0, uint8 zero point 128): "
                         "Kiln's int8 kernels (as TFLite's) take symmetric weights")
    return data.astype(np.int8), _scales(ctx, node, s, "weight scale")


def _bias(ctx: ConvertContext, node: OnnxNode, index: int, scale: np.ndarray) -> list[str]:
    if not node.input(index):
        return []
    b = ctx.require_const(node, index, "bias")
    if b.dtype != np.int32:
        raise node.error(f"bias is {b.dtype}; int32 expected")
    name = ctx.weight(node, "bias", b.reshape(-1).copy())
    ctx.b.g.values[name].quant = Quant.of(scale, 0, 0)
    return [name]


def _int8_kernels_fit(ctx: ConvertContext, node: OnnxNode) -> bool:
    """Kiln's int8 kernels take a computed int8 activation and symmetric constant weights."""
    x, w, wz = ctx.value(node.input(0)), ctx.const(node.input(3)), ctx.const(node.input(5))
    return (x.dtype == "int8" and not x.is_const and (x.quant is not None or x.name not in ctx.b.g.inputs)
            and w is not None and (wz is None or np.all(wz.astype(np.int64) == (128 if wz.dtype == np.uint8 else 0))))


@converter("QLinearConv")
def convert_qlinear_conv(ctx, node):
    """int8 Conv2D or DepthwiseConv2D between NCHW <-> NHWC transposes of int8 tensors (else float
    arithmetic: _float_qlinear)."""
    if not _int8_kernels_fit(ctx, node):
        attrs = dict(node.attrs)
        bias = ctx.const(node.input(8)) if node.input(8) else None
        _float_qlinear(ctx, node, "Conv", attrs, (-1, 1, 1, 1)[:len(ctx.shape(node.input(3)))], bias)
        return
    x = _int8_input(ctx, node, 0, 1, 2)
    shape = ctx.shape(node.input(0))
    if len(shape) != 4:
        raise node.error(f"input must be NCHW (rank 4), got shape {list(shape)}")
    w, w_scale = _int8_weights(ctx, node, 3, 4, 5)
    y_quant = _activation_quant(ctx, node, 6, 7, default_uint8=False)
    x_quant = ctx.b.g.values[x].quant
    if w.ndim != 4:
        raise node.error(f"weights of shape {list(w.shape)} are not OIHW")
    win = window(node, shape[2:], [int(k) for k in node.attr("kernel_shape", w.shape[2:])])
    c_in, m, group = shape[1], w.shape[0], int(node.attr("group", 1))
    if group == 1 and w.shape[1] == c_in:
        op, weights, axis, extra = "Conv2D", w.transpose(0, 2, 3, 1), 0, {}
    elif group == c_in and w.shape[1] == 1 and m % c_in == 0:
        op, weights, axis, extra = "DepthwiseConv2D", w.transpose(1, 2, 3, 0), 3, {"depth_multiplier": m // c_in}
    else:
        raise node.error(f"grouped QLinearConv with group={group} is not supported")
    scales = np.broadcast_to(w_scale, (m,)) if w_scale.size in (1, m) else None
    if scales is None:
        raise node.error(f"{w_scale.size} weight scales for {m} output channels")
    wq = ctx.new_const(ctx.fresh(f"{node.name}_weight"), np.ascontiguousarray(weights))
    ctx.b.g.values[wq].quant = Quant.of(w_scale if w_scale.size > 1 else float(w_scale[0]), 0, axis)
    bias = _bias(ctx, node, 8, x_quant.s * scales)
    nhwc = ctx.add(node, "Transpose", [x], role="to_nhwc", quant=x_quant, perm=(0, 2, 3, 1))
    y = ctx.add(node, op, [nhwc, wq] + bias, quant=y_quant, strides=win.strides, dilations=win.dilations,
                pads=win.pads, **extra)
    ctx.add(node, "Transpose", [y], role="to_nchw", out=node.outputs[0], quant=y_quant, perm=(0, 3, 1, 2))


@converter("QLinearMatMul")
def convert_qlinear_matmul(ctx, node):
    """a @ B with constant 2-D B: an int8 FullyConnected (keep_dims) with weights B^T (else
    float arithmetic: _float_qlinear)."""
    if not _int8_kernels_fit(ctx, node):
        _float_qlinear(ctx, node, "MatMul", {}, (-1,), None)
        return
    a = _int8_input(ctx, node, 0, 1, 2)
    w, w_scale = _int8_weights(ctx, node, 3, 4, 5)
    y_quant = _activation_quant(ctx, node, 6, 7, default_uint8=False)
    if w.ndim != 2 or ctx.shape(node.input(0))[-1:] != (w.shape[0],):
        raise node.error(f"B of shape {list(w.shape)} must be a constant [K, N] matrix for A "
                         f"{list(ctx.shape(node.input(0)))}")
    n = w.shape[1]
    if w_scale.size not in (1, n):
        raise node.error(f"{w_scale.size} scales for B with {n} columns")
    wq = ctx.new_const(ctx.fresh(f"{node.name}_weight"), np.ascontiguousarray(w.T))
    ctx.b.g.values[wq].quant = Quant.of(w_scale if w_scale.size > 1 else float(w_scale[0]), 0, 0)
    ctx.add(node, "FullyConnected", [a, wq], out=node.outputs[0], quant=y_quant, keep_dims=True)
