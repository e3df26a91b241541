"""Mean: average over `axes` (ONNX ReduceMean / GlobalAveragePool, TFLite MEAN).

Empty `axes` reduces every axis (ONNX's default). Each output element sums its inputs in
row-major order of the reduced indices, as TFLM's reference Reduce walks them.

float32: the sum divided by the element count (TFLM reference_ops::Mean).
int8 and int16: TFLM's QuantizedMeanOrSum, whatever the input and output quantization: an int32 sum
of the raw inputs, minus zero_point * count, rescaled by QuantizeMultiplier(s_in / s_out)
with 1/count folded into the multiplier (multiplier * 2**shift / count, shift =
floor(log2(count)) capped), plus the output zero point, saturated.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import quant_of, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.quant import multiply_by_quantized_multiplier, quantize_multiplier
from codegen.quant.fixedpoint import wrap_int32

LOOP_DIMS = 3  # the C kernel nests at most this many kept and this many reduced loops


def resolved_axes(node: Node, rank: int) -> tuple[int, ...]:
    """The reduced axes, non-negative, sorted and unique; all axes when `axes` is empty."""
    axes = tuple(int(a) for a in node.attrs["axes"])
    if not axes:
        return tuple(range(rank))
    bad = [a for a in axes if not -rank <= a < rank]
    if bad:
        raise KilnError(f"axes {list(axes)} out of range for rank {rank}", node=node.name)
    return tuple(sorted({a % rank for a in axes}))


def reduce_plan(node: Node, shape: tuple[int, ...]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(size, element stride) of the kept loops and of the reduced loops, outermost first.

    Adjacent axes of the same kind are merged and size-1 axes dropped; each list is padded
    with (1, 0) to LOOP_DIMS entries.
    """
    axes = set(resolved_axes(node, len(shape)))
    merged: list[list] = []  # [size, stride, reduced]
    stride = 1
    for axis in reversed(range(len(shape))):
        size = shape[axis]
        if size != 1:
            if merged and merged[-1][2] == (axis in axes) and merged[-1][1] * merged[-1][0] == stride:
                merged[-1][0] *= size  # contiguous with the inner group: one loop
            else:
                merged.append([size, stride, axis in axes])
        stride *= size
    merged.reverse()
    kept = [(s, st) for s, st, red in merged if not red]
    reduced = [(s, st) for s, st, red in merged if red]
    if len(kept) > LOOP_DIMS or len(reduced) > LOOP_DIMS:
        raise KilnError(f"Mean over axes {sorted(axes)} of shape {list(shape)} alternates kept and "
                        f"reduced axes more than {LOOP_DIMS} times", node=node.name)
    pad = [(1, 0)]
    return pad * (LOOP_DIMS - len(kept)) + kept, pad * (LOOP_DIMS - len(reduced)) + reduced


def mean_int8_params(input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
    """TFLM's (multiplier, shift) for an int8 mean of `count` elements: QuantizeMultiplier of
    double(s_in) / double(s_out), then 1/count folded in as QuantizedMeanOrSum does."""
    multiplier, shift = quantize_multiplier(float(np.float32(input_scale)) / float(np.float32(output_scale)))
    if count > 0:
        extra = min(count.bit_length() - 1, 32, 31 + shift)
        multiplier = int((multiplier << extra) // count)
        shift -= extra
    return multiplier, shift


@register
class Mean(Op):
    name = "Mean"
    kind = OpKind.REDUCTION
    attributes = {"axes": (), "keepdims": True}
    arity = (1, 1)
    kernels = ("mean_f32", "mean_s8", "mean_s16")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        axes = resolved_axes(node, len(x.shape))
        if node.attrs["keepdims"]:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return [(x.dtype, shape)]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        x = g.values[node.inputs[0]]
        dtype = require_dtypes(node, g, ("float32", "int8", "int16"))
        if dtype != "float32":
            for name in (node.inputs[0], node.outputs[0]):
                if quant_of(g, name, node).per_channel:
                    raise KilnError(f"{dtype} Mean needs per-tensor quantization on '{name}'", node=node.name)
        reduce_plan(node, x.shape)

    @classmethod
    def quantized_multiplier(cls, input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
        """TFLM's (multiplier, shift) of the quantized kernel: the mean folds 1/count in."""
        return mean_int8_params(input_scale, output_scale, count)

    @staticmethod
    def _rows(node: Node, x: np.ndarray) -> tuple[np.ndarray, int]:
        """The input as [outputs, count]: reduced axes last, in row-major order."""
        axes = resolved_axes(node, x.ndim)
        kept = [a for a in range(x.ndim) if a not in axes]
        count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        return np.transpose(x, kept + list(axes)).reshape(-1, count), count

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        out_shape = g.values[node.outputs[0]].shape
        rows, count = cls._rows(node, x)
        if x.dtype in (np.int8, np.int16):
            qi, qo = quant_of(g, node.inputs[0], node), quant_of(g, node.outputs[0], node)
            sums = wrap_int32(rows.astype(np.int64).sum(axis=1))
            shifted = wrap_int32(sums.astype(np.int64) - qi.zp * count)
            multiplier, shift = cls.quantized_multiplier(qi.s, qo.s, count)
            out = multiply_by_quantized_multiplier(shifted, multiplier, shift).astype(np.int64) + qo.zp
            info = np.iinfo(x.dtype)
            return [np.clip(out, info.min, info.max).astype(x.dtype).reshape(out_shape)]
        acc = np.zeros(rows.shape[0], np.float32)
        for k in range(count):  # sequential float32 sums, in the order the C kernel adds
            acc = (acc + rows[:, k]).astype(np.float32)
        return [(acc / np.float32(count)).astype(np.float32).reshape(out_shape)]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        g = ctx.g
        x, out = node.inputs[0], node.outputs[0]
        kept, reduced = reduce_plan(node, g.values[x].shape)
        params: dict = {"kept_dims": tuple(s for s, _ in kept), "kept_strides": tuple(st for _, st in kept),
                        "red_dims": tuple(s for s, _ in reduced), "red_strides": tuple(st for _, st in reduced)}
        count = int(np.prod([s for s, _ in reduced], dtype=np.int64))
        if g.values[x].dtype == "float32":
            params["count"] = float(count)
            ctx.request(KernelRequest("mean_f32", node, params, (ctx.tensor(x), ctx.tensor(out))))
            return
        qi, qo = quant_of(g, x, node), quant_of(g, out, node)
        multiplier, shift = cls.quantized_multiplier(qi.s, qo.s, count)
        params.update(zp_times_count=int(wrap_int32(qi.zp * count)), multiplier=multiplier,
                      shift=shift, output_zero_point=qo.zp)
        kernel = "mean_s16" if g.values[x].dtype == "int16" else "mean_s8"
        ctx.request(KernelRequest(kernel, node, params, (ctx.tensor(x), ctx.tensor(out)), ("kiln_fixedpoint.h",)))
