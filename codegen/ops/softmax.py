"""Softmax along `axis`, with TFLite's `beta` (ONNX Softmax: beta 1).

The tensor is walked as [outer, depth, inner] around the axis (no transpose): the last axis
has inner = 1 and contiguous rows.

float32: TFLM reference_ops::Softmax: subtract the row maximum, expf((x - max) * beta),
divide by the sum.
int8 -> int8: TFLM's fixed-point Softmax (codegen.quant.softmax_int8 and its C mirror
kiln_softmax_row_s8). The output must be quantized with scale 1/256 and zero point -128, the
only int8 format TFLM's kernel writes. Rows along a non-last axis are gathered into a
scratch row, computed, and scattered back. With `any_output_quant` (set by fold_qdq in
`--numerics onnxruntime` only): onnxruntime's QLinearSoftmax (codegen.quant.onnxruntime.softmax),
any per-tensor output quantization, last axis and beta 1 only; only the onnxruntime kernel
variant computes it.
int16 -> int16: TFLM's SoftmaxInt16 (codegen.quant.softmax16: exp and reciprocal tables),
along the last axis; zero points 0, output scale 1/32768.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import quant_of, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.quant import check_softmax_output, softmax_int8, softmax_params
from codegen.quant import onnxruntime as ortq
from codegen.quant.softmax16 import exp_lut, one_over_one_plus_x_lut, softmax16_multiplier, softmax_int16


def normalized_axis(node: Node, rank: int) -> int:
    axis = int(node.attrs["axis"])
    if not -rank <= axis < rank:
        raise KilnError(f"axis {axis} out of range for rank {rank}", node=node.name)
    return axis % rank


def row_geometry(node: Node, shape: tuple[int, ...]) -> dict[str, int]:
    """outer / depth / inner sizes of the tensor around the softmax axis."""
    axis = normalized_axis(node, len(shape))
    return {"outer": int(np.prod(shape[:axis], dtype=np.int64)), "depth": int(shape[axis]),
            "inner": int(np.prod(shape[axis + 1:], dtype=np.int64))}


def _int8_params(node: Node, g: Graph):
    """TFLM's SoftmaxParams, or None for the QLinearSoftmax form (`any_output_quant`)."""
    qi, qo = quant_of(g, node.inputs[0], node), quant_of(g, node.outputs[0], node)
    if qi.per_channel or qo.per_channel:
        raise KilnError("int8 Softmax needs per-tensor quantization", node=node.name)
    if node.attrs["any_output_quant"]:
        rank = len(g.values[node.inputs[0]].shape)
        if normalized_axis(node, rank) != rank - 1 or float(node.attrs["beta"]) != 1.0:
            raise KilnError("int8 Softmax at any output quantization (onnxruntime's QLinearSoftmax) runs "
                            "along the last axis with beta 1 only", node=node.name)
        return None
    try:
        check_softmax_output("int8", qo.s, qo.zp)
        return softmax_params(float(node.attrs["beta"]), qi.s)
    except KilnError as err:
        err.node = err.node or node.name
        raise


def _int16_params(node: Node, g: Graph) -> tuple[int, int]:
    """SoftmaxPrepare's checks and input multiplier for int16 (last axis only, as TFLite's)."""
    qi, qo = quant_of(g, node.inputs[0], node), quant_of(g, node.outputs[0], node)
    x = g.values[node.inputs[0]]
    if normalized_axis(node, len(x.shape)) != len(x.shape) - 1:
        raise KilnError("int16 Softmax runs along the last axis only", node=node.name)
    if qi.per_channel or qo.per_channel or qi.zp or qo.zp or g.values[node.outputs[0]].dtype != "int16":
        raise KilnError("int16 Softmax needs int16 in and out, per-tensor, with zero points 0", node=node.name)
    if abs(float(np.float32(qo.s)) - 1 / 32768) > 0.001 / 32768:
        raise KilnError(f"int16 Softmax output must be quantized with scale 1/32768 (TFLM's), not {qo.s!r}",
                        node=node.name)
    return softmax16_multiplier(qi.s, float(node.attrs["beta"]))


@register
class Softmax(Op):
    name = "Softmax"
    kind = OpKind.OPAQUE
    attributes = {"axis": -1, "beta": 1.0, "any_output_quant": False}
    arity = (1, 1)
    kernels = ("softmax_f32", "softmax_s8", "softmax_strided_s8", "softmax_s16")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if not x.shape:
            raise KilnError("Softmax of a scalar", node=node.name)
        normalized_axis(node, len(x.shape))
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        dtype = require_dtypes(node, g, ("float32", "int8", "int16"))
        if dtype == "int16":
            _int16_params(node, g)
        elif dtype == "int8":
            if g.values[node.outputs[0]].dtype != "int8":
                raise KilnError("int8 Softmax must produce int8", node=node.name)
            _int8_params(node, g)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        axis = normalized_axis(node, x.ndim)
        if x.dtype == np.int8 and _int8_params(node, g) is None:
            qi, qo = g.values[node.inputs[0]].quant, g.values[node.outputs[0]].quant
            table = ortq.softmax_exp_table(qi.s, x.shape[-1])
            return [ortq.softmax(x, table, ortq.softmax_y_scale(qo.s), qo.zp)]
        if x.dtype == np.int8:
            rows = np.moveaxis(x, axis, -1)
            return [np.moveaxis(softmax_int8(rows, _int8_params(node, g)), -1, axis)]
        if x.dtype == np.int16:
            return [softmax_int16(x, *_int16_params(node, g), exp_lut(), one_over_one_plus_x_lut())]
        beta = np.float32(node.attrs["beta"])
        e = np.exp((x - x.max(axis=axis, keepdims=True)) * beta).astype(np.float32)
        return [(e / e.sum(axis=axis, keepdims=True, dtype=np.float32)).astype(np.float32)]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        g = ctx.g
        x = node.inputs[0]
        geo = row_geometry(node, g.values[x].shape)
        if g.values[x].dtype == "float32":
            ctx.request(KernelRequest("softmax_f32", node, {**geo, "beta": float(node.attrs["beta"])},
                                      headers=("math.h",)))
            return
        if g.values[x].dtype == "int16":
            multiplier, shift = _int16_params(node, g)
            ctx.request(KernelRequest("softmax_s16", node, {
                "outer": geo["outer"], "depth": geo["depth"], "input_multiplier": multiplier, "input_left_shift": shift,
                "exp_lut": ctx.constant(node, "exp_lut", exp_lut(), "int16"),
                "recip_lut": ctx.constant(node, "recip_lut", one_over_one_plus_x_lut(), "int16")},
                headers=("kiln_fixedpoint.h",)))
            return
        sp = _int8_params(node, g)
        if sp is None:  # QLinearSoftmax's form: the onnxruntime variant's softmax_s8 only
            ctx.request(KernelRequest("softmax_s8", node, {"outer": geo["outer"], "depth": geo["depth"]},
                                      headers=("kiln_quant.h",)))
            return
        params = {**geo, "input_multiplier": sp.input_multiplier,
                  "input_left_shift": sp.input_left_shift, "diff_min": sp.diff_min}
        if geo["inner"] == 1:
            del params["inner"]
            ctx.request(KernelRequest("softmax_s8", node, params, headers=("kiln_quant.h",)))
        else:  # the strided kernel: a scratch row in and a scratch row out
            ctx.request(KernelRequest("softmax_strided_s8", node, params, headers=("kiln_quant.h",)))
