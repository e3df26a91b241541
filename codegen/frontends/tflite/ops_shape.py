"""TFLite data movement: slicing, splitting, stacking, gathering, broadcasting, constants of shape.

These copy stored values, so every type converts, quantized ones included when input and
output share one quantization (`same_quant`). Shapes, axes, begin/end/strides and index
tensors must be known at compile time; outputs that only depend on shapes (SHAPE,
ZEROS_LIKE, BROADCAST_ARGS, FILL of a constant) are folded to constants. BROADCAST_ARGS of
shapes computed at run time runs its own small kernel.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.tflite import hybrid
from codegen.frontends.tflite.compose import (axis, constant, emit_output, ints, known, one_int, only_types, same_quant,
                                              step)
from codegen.frontends.tflite.importer import OpContext
from codegen.frontends.tflite.converter import converts
from codegen.ir.types import np_dtype

_INDEX_TYPES = {"INT32": np.int32, "INT64": np.int64}


@converts("PACK", inputs=(1, None))
def pack(ctx: OpContext) -> None:
    n = len(ctx.op.inputs)
    same_quant(ctx, tuple(range(n)))
    shape = ctx.shape(0)
    a = axis(ctx, ctx.options("PackOptions")["Axis"], len(shape) + 1)
    grown = shape[:a] + (1,) + shape[a:]
    if n == 1:
        ctx.emit("Reshape", [ctx.input(0)], shape=grown)
        return
    parts = [step(ctx, "Reshape", [ctx.input(k)], f"item{k}", quant=ctx.tensor(k).quant, shape=grown)
             for k in range(n)]
    ctx.emit("Concat", parts, axis=a)


@converts("UNPACK", outputs=None)
def unpack(ctx: OpContext) -> None:
    shape = ctx.shape(0)
    a = axis(ctx, ctx.options("UnpackOptions")["Axis"], len(shape))
    if shape[a] != len(ctx.op.outputs):
        raise ctx.error(f"unpacks {shape[a]} slices along axis {a} into {len(ctx.op.outputs)} outputs")
    same_quant(ctx, (0,), tuple(range(len(ctx.op.outputs))))
    for k in range(len(ctx.op.outputs)):
        index = constant(ctx, f"index{k}", np.array(k, np.int32))
        emit_output(ctx, k, "Gather", [ctx.input(0), index], axis=a)


@converts("SPLIT", inputs=(2, 2), outputs=None)
def split(ctx: OpContext) -> None:
    # Inputs: (axis, x).
    a = one_int(ctx, 0, "axis")
    shape = ctx.shape(1)
    a = axis(ctx, a, len(shape))
    n = len(ctx.op.outputs)
    if shape[a] % n:
        raise ctx.error(f"dimension {a} of size {shape[a]} does not split into {n} equal parts")
    same_quant(ctx, (1,), tuple(range(n)))
    ctx.emit("Split", [ctx.input(1)], axis=a, split=(shape[a] // n,) * n)


@converts("SPLIT_V", inputs=(3, 3), outputs=None)
def split_v(ctx: OpContext) -> None:
    # Inputs: (x, size_splits, axis); one size may be -1 (the rest).
    shape = ctx.shape(0)
    a = one_int(ctx, 2, "axis")
    a = axis(ctx, a, len(shape))
    sizes = ints(ctx, 1, "size_splits")
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = shape[a] - (sum(sizes) + 1)
    if len(sizes) != len(ctx.op.outputs) or sum(sizes) != shape[a] or min(sizes) < 0:
        raise ctx.error(f"size_splits {sizes} do not split dimension {a} of size {shape[a]} into "
                        f"{len(ctx.op.outputs)} outputs")
    same_quant(ctx, (0,), tuple(range(len(sizes))))
    ctx.emit("Split", [ctx.input(0)], axis=a, split=tuple(sizes))


@converts("SLICE", inputs=(3, 3))
def slice_(ctx: OpContext) -> None:
    shape = ctx.shape(0)
    begin, size = ints(ctx, 1, "begin"), ints(ctx, 2, "size")
    if len(begin) != len(shape) or len(size) != len(shape):
        raise ctx.error(f"begin {begin} and size {size} need one entry per dimension of {list(shape)}")
    ends = [d if s == -1 else b + s for b, s, d in zip(begin, size, shape)]
    if any(not 0 <= b <= e <= d for b, e, d in zip(begin, ends, shape)):
        raise ctx.error(f"begin {begin} and size {size} reach outside {list(shape)}")
    same_quant(ctx)
    ctx.emit("Slice", [ctx.input(0)], starts=tuple(begin), ends=tuple(ends), steps=(1,) * len(shape))


@converts("STRIDED_SLICE", inputs=(4, 4))
def strided_slice(ctx: OpContext) -> None:
    """TFLite's (and numpy's) strided indexing: begin/end masks, ellipsis, new axes, shrunk
    axes and `offset` (end relative to begin) become one Slice on the input's own axes and a
    Reshape to the output's shape."""
    shape = ctx.shape(0)
    o = ctx.options("StridedSliceOptions")
    begin, end, strides = ints(ctx, 1, "begin"), ints(ctx, 2, "end"), ints(ctx, 3, "strides")
    if not len(begin) == len(end) == len(strides):
        raise ctx.error(f"begin {begin}, end {end} and strides {strides} differ in length")
    if 0 in strides:
        raise ctx.error(f"strides {strides} hold a zero")
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if o["EllipsisMask"] & bit:
            index.append(Ellipsis)
        elif o["NewAxisMask"] & bit:
            index.append(None)
        elif o["ShrinkAxisMask"] & bit:
            index.append(b)
        else:
            stop = b + e if o["Offset"] else e
            index.append(slice(None if o["BeginMask"] & bit else b, None if o["EndMask"] & bit else stop, s))
    if Ellipsis not in index:
        index.append(Ellipsis)
    try:
        picked = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[tuple(index)]
    except IndexError as err:
        raise ctx.error(f"begin {begin} is out of range for {list(shape)} ({err})") from None
    starts, ends, steps = _slice_per_axis(index, shape)
    same_quant(ctx)
    x = ctx.input(0)
    if picked.size and not all(st == 0 and en == d and sp == 1 for st, en, sp, d in zip(starts, ends, steps, shape)):
        x = step(ctx, "Slice", [x], "slice", quant=ctx.tensor(0).quant, starts=starts, ends=ends, steps=steps)
    ctx.emit("Reshape", [x], shape=tuple(picked.shape))


def _slice_per_axis(index: list, shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """(starts, ends, steps) over the input's axes for a numpy index of slices, integers, None
    and one Ellipsis (ends of negative steps written so that ONNX Slice clamping keeps them)."""
    fill = len(shape) - sum(1 for i in index if i is not None and i is not Ellipsis)
    expanded = []
    for i in index:
        if i is Ellipsis:
            expanded += [slice(None)] * fill
            fill = 0
        elif i is not None:
            expanded.append(i)
    starts, ends, steps = [], [], []
    for i, d in zip(expanded, shape):
        if isinstance(i, slice):
            start, stop, stride = i.indices(d)
            if stride < 0 and stop < 0:
                stop = -d - 1  # before element 0
        else:
            start = i % d
            stop, stride = start + 1, 1
        starts.append(start)
        ends.append(stop)
        steps.append(stride)
    return tuple(starts), tuple(ends), tuple(steps)


@converts("GATHER", inputs=(2, 2))
def gather(ctx: OpContext) -> None:
    o = ctx.options("GatherOptions")
    if o["BatchDims"]:
        raise ctx.error(f"batch_dims {o['BatchDims']} is not supported")
    same_quant(ctx)
    ctx.emit("Gather", [ctx.input(0), ctx.input(1)], axis=axis(ctx, o["Axis"], len(ctx.shape(0))))


@converts("GATHER_ND", inputs=(2, 2))
def gather_nd(ctx: OpContext) -> None:
    """params[indices[..., :]]: with the indices known, one Take of the flat positions."""
    indices = known(ctx, 1)
    if indices is None:
        raise ctx.error("indices computed at run time need a GatherND kernel (Kiln takes constant indices)")
    shape = ctx.shape(0)
    depth = indices.shape[-1] if indices.ndim else 0
    if indices.ndim == 0 or depth > len(shape):
        raise ctx.error(f"indices of shape {list(indices.shape)} do not index params of shape {list(shape)}")
    idx = indices.astype(np.int64)
    if np.any(idx < 0) or np.any(idx >= np.array(shape[:depth])):
        raise ctx.error(f"indices {indices.tolist()} are out of range for {list(shape)}")
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[tuple(np.moveaxis(idx, -1, 0))]
    same_quant(ctx)
    ctx.emit("Take", [ctx.input(0), constant(ctx, "positions", positions)])


@converts("EMBEDDING_LOOKUP", inputs=(2, 2))
def embedding_lookup(ctx: OpContext) -> None:
    """Rows `value[ids]`. int8 rows read into float32 (hybrid) are dequantized once at import,
    as TFLite Micro computes them (q * scale, one float32 rounding)."""
    value = ctx.tensor(1)
    if value.type_name == "INT8" and ctx.out_tensor().type_name == "FLOAT32":
        if value.data is None or value.quant is None or value.quant.per_channel or value.quant.zp != 0:
            raise ctx.error("hybrid lookup needs constant int8 rows with one scale and zero point 0")
        table = constant(ctx, "rows", hybrid.dequantize(value))
    else:
        same_quant(ctx, (1,))
        table = ctx.input(1)
    ctx.emit("Gather", [table, ctx.input(0)], axis=0)


@converts("BROADCAST_TO", inputs=(2, 2))
def broadcast_to(ctx: OpContext) -> None:
    same_quant(ctx)
    ctx.emit("Expand", [ctx.input(0)], shape=tuple(ints(ctx, 1, "shape")))


@converts("BROADCAST_ARGS", inputs=(2, 2))
def broadcast_args(ctx: OpContext) -> None:
    a, b = known(ctx, 0), known(ctx, 1)
    if a is None or b is None:  # shapes computed at run time: TFLM's kernel
        only_types(ctx, ("INT32", "INT64"))
        ctx.emit("BroadcastArgs", [ctx.input(0), ctx.input(1)])
        return
    try:
        shape = np.broadcast_shapes(tuple(int(v) for v in a), tuple(int(v) for v in b))
    except ValueError:
        raise ctx.error(f"shapes {a.tolist()} and {b.tolist()} do not broadcast") from None
    ctx.emit_constant(np.array(shape, a.dtype))


@converts("FILL", inputs=(2, 2))
def fill(ctx: OpContext) -> None:
    dims = tuple(ints(ctx, 0, "dims"))
    if any(d < 0 for d in dims):
        raise ctx.error(f"dims {list(dims)} hold a negative size")
    value = known(ctx, 1)
    out = ctx.out_tensor()
    same_quant(ctx, (1,))
    if value is not None:
        ctx.emit_constant(np.full(dims, value.reshape(-1)[0], value.dtype), quant=out.quant)
        return
    ctx.emit("Expand", [ctx.input(1)], shape=dims)


@converts("ZEROS_LIKE")
def zeros_like(ctx: OpContext) -> None:
    # Stored zeros, whatever the quantization (TFLite Micro memsets the output).
    t = ctx.out_tensor()
    ctx.emit_constant(np.zeros(ctx.shape(0), np_dtype(ctx.imp.b.g.values[ctx.input(0)].dtype)), quant=t.quant)


@converts("SHAPE")
def shape_(ctx: OpContext) -> None:
    out = ctx.out_tensor().type_name
    if out not in _INDEX_TYPES:
        raise ctx.error(f"output type {out.lower()} is not supported (int32 or int64)")
    ctx.emit_constant(np.array(ctx.shape(0), _INDEX_TYPES[out]))


@converts("REVERSE_V2", inputs=(2, 2))
def reverse_v2(ctx: OpContext) -> None:
    shape = ctx.shape(0)
    axes = {axis(ctx, a, len(shape)) for a in ints(ctx, 1, "axes")}
    same_quant(ctx)
    starts = tuple(-1 if i in axes else 0 for i in range(len(shape)))
    ends = tuple(-d - 1 if i in axes else d for i, d in enumerate(shape))
    steps = tuple(-1 if i in axes else 1 for i in range(len(shape)))
    ctx.emit("Slice", [ctx.input(0)], starts=starts, ends=ends, steps=steps)


@converts("MIRROR_PAD", inputs=(2, 2))
def mirror_pad(ctx: OpContext) -> None:
    """REFLECT excludes the edge, SYMMETRIC repeats it. REFLECT is Kiln's MirrorPad; SYMMETRIC
    is one Gather per padded axis with the index table of that axis."""
    shape = ctx.shape(0)
    pads = np.asarray(ints(ctx, 1, "paddings")).reshape(-1, 2) if shape else np.zeros((0, 2), int)
    if pads.shape != (len(shape), 2) or np.any(pads < 0):
        raise ctx.error(f"paddings {pads.tolist()} are not [{len(shape)}, 2] non-negative values")
    symmetric = ctx.options("MirrorPadOptions")["Mode"] == 1
    limit = [d if symmetric else d - 1 for d in shape]
    if np.any(pads > np.array(limit)[:, None]):
        raise ctx.error(f"paddings {pads.tolist()} exceed what {list(shape)} can mirror")
    same_quant(ctx)
    if not symmetric:
        flat = tuple(int(p) for p in pads[:, 0]) + tuple(int(p) for p in pads[:, 1])
        ctx.emit("MirrorPad", [ctx.input(0)], pads=flat, mode="reflect")
        return
    padded = [i for i in range(len(shape)) if pads[i].any()] or [0]
    x = ctx.input(0)
    for i in padded:
        d, (before, after) = shape[i], pads[i]
        p = np.arange(-before, d + after)
        idx = np.where(p < 0, -p - 1, np.where(p >= d, 2 * d - 1 - p, p)).astype(np.int32)
        if i == padded[-1]:
            ctx.emit("Gather", [x, constant(ctx, f"mirror{i}", idx)], axis=i)
        else:
            x = step(ctx, "Gather", [x, constant(ctx, f"mirror{i}", idx)], f"pad{i}", quant=ctx.tensor(0).quant, axis=i)
