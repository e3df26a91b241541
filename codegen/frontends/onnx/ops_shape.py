"""Shape and data-movement ops: Reshape family, Transpose, Concat, Pad, Slice, Split, Gather,
Tile, Expand, DepthToSpace / SpaceToDepth, pass-throughs, constants.

Flatten, Squeeze, Unsqueeze and Reshape all become one Kiln Reshape with the static output
shape resolved here; axes, shapes, starts, repeats and split sizes must be constants
(attributes in early opsets, inputs later). DepthToSpace and SpaceToDepth are a Reshape, a
Transpose and a Reshape.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.reader import OnnxNode, tensor_array


def norm_axis(node: OnnxNode, axis: int, rank: int, what: str = "axis") -> int:
    """A possibly negative axis in [-rank, rank) as a non-negative one."""
    if not -rank <= axis < rank:
        raise node.error(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def reshape(ctx: ConvertContext, node: OnnxNode, shape) -> None:
    x = node.input(0)
    ctx.add(node, "Reshape", [ctx.kiln(x)], out=node.outputs[0], shape=tuple(int(d) for d in shape))


def axes_of(ctx: ConvertContext, node: OnnxNode, since: int, index: int = 1) -> list[int] | None:
    """The `axes` of Squeeze/Unsqueeze/Pad: an attribute before opset `since`, an input after."""
    if ctx.opset < since:
        axes = node.attr("axes")
        return None if axes is None else [int(a) for a in axes]
    if not node.input(index):
        return None
    return [int(a) for a in ctx.require_const(node, index, "axes").reshape(-1)]


@converter("Reshape")
def convert_reshape(ctx, node):
    x_shape = ctx.shape(node.input(0))
    target = [int(d) for d in ctx.require_const(node, 1, "shape").reshape(-1)]
    allowzero = bool(node.attr("allowzero", 0))
    out = []
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if i >= len(x_shape):
                raise node.error(f"shape {target} copies dimension {i}, the input has rank {len(x_shape)}")
            d = x_shape[i]
        elif d < -1:
            raise node.error(f"shape {target} has a negative size {d}")
        out.append(d)
    if out.count(-1) > 1:
        raise node.error(f"shape {target} has more than one -1")
    size = int(np.prod(x_shape, dtype=np.int64))
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise node.error(f"cannot reshape {list(x_shape)} to {target}")
        out[out.index(-1)] = size // known
    if int(np.prod(out, dtype=np.int64)) != size:
        raise node.error(f"cannot reshape {list(x_shape)} to {target}")
    reshape(ctx, node, out)


@converter("Flatten")
def convert_flatten(ctx, node):
    shape = ctx.shape(node.input(0))
    axis = int(node.attr("axis", 1))
    if not -len(shape) <= axis <= len(shape):
        raise node.error(f"axis {axis} is out of range for rank {len(shape)}")
    axis = axis + len(shape) if axis < 0 else axis
    reshape(ctx, node, (int(np.prod(shape[:axis], dtype=np.int64)), int(np.prod(shape[axis:], dtype=np.int64))))


@converter("Squeeze")
def convert_squeeze(ctx, node):
    shape = ctx.shape(node.input(0))
    axes = axes_of(ctx, node, since=13)
    if axes is None:
        drop = {i for i, d in enumerate(shape) if d == 1}
    else:
        drop = {norm_axis(node, a, len(shape), "axes entry") for a in axes}
        bad = [a for a in sorted(drop) if shape[a] != 1]
        if bad:
            raise node.error(f"cannot squeeze axis {bad[0]} of size {shape[bad[0]]}")
    reshape(ctx, node, [d for i, d in enumerate(shape) if i not in drop])


@converter("Unsqueeze")
def convert_unsqueeze(ctx, node):
    shape = list(ctx.shape(node.input(0)))
    axes = axes_of(ctx, node, since=13)
    if not axes:
        raise node.error("axes are missing")
    rank = len(shape) + len(axes)
    new = sorted({norm_axis(node, a, rank, "axes entry") for a in axes})
    if len(new) != len(axes):
        raise node.error(f"axes {axes} repeat an axis")
    for a in new:
        shape.insert(a, 1)
    reshape(ctx, node, shape)


@converter("Transpose")
def convert_transpose(ctx, node):
    rank = len(ctx.shape(node.input(0)))
    perm = [int(p) for p in node.attr("perm", list(reversed(range(rank))))]
    if sorted(perm) != list(range(rank)):
        raise node.error(f"perm {perm} is not a permutation of 0..{rank - 1}")
    ctx.add(node, "Transpose", [ctx.kiln(node.input(0))], out=node.outputs[0], perm=tuple(perm))


@converter("Concat")
def convert_concat(ctx, node):
    """Empty inputs (a zero-size dimension) add nothing and are dropped."""
    ins = [i for i in node.inputs if i and 0 not in ctx.shape(i)]
    if len(ins) == 1:
        ctx.alias(node.outputs[0], ins[0])
        return
    if not ins:
        raise node.error("has no inputs with elements")
    if node.attr("axis") is None:
        raise node.error("attribute 'axis' is missing")
    axis = norm_axis(node, int(node.attr("axis")), len(ctx.shape(ins[0])))
    ctx.add(node, "Concat", [ctx.kiln(i) for i in ins], out=node.outputs[0], axis=axis)


@converter("Pad")
def convert_pad(ctx, node):
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise node.error(f"mode '{mode}' is not supported (constant, reflect, edge, wrap)")
    rank = len(ctx.shape(node.input(0)))
    if ctx.opset < 11:
        pads = [int(p) for p in node.attr("pads", [])]
        value = float(node.attr("value", 0.0))
    else:
        pads = [int(p) for p in ctx.require_const(node, 1, "pads").reshape(-1)]
        cval = ctx.const(node.input(2))
        if node.input(2) and cval is None:
            raise node.error("constant_value (input 2) must be a constant")
        value = 0.0 if cval is None or cval.size == 0 else float(cval.reshape(-1)[0])
        quant = ctx.value(node.input(0)).quant
        if cval is not None and cval.dtype in (np.int8, np.uint8) and quant is not None and not quant.per_channel:
            # a stored integer of a quantized tensor (QOperator's Pad by its zero point), while
            # Kiln's int8 Pad takes a real value; uint8 is int8 shifted by -128 in Kiln (ops_quant)
            value = (value - (128 if cval.dtype == np.uint8 else 0) - quant.zp) * quant.s
        axes = axes_of(ctx, node, since=18, index=3)
        if axes is not None:
            if len(pads) != 2 * len(axes):
                raise node.error(f"{len(pads)} pads for {len(axes)} axes")
            full = [0] * (2 * rank)
            for k, a in enumerate(axes):
                a = norm_axis(node, a, rank, "axes entry")
                full[a], full[a + rank] = pads[k], pads[k + len(axes)]
            pads = full
    if len(pads) != 2 * rank:
        raise node.error(f"pads has {len(pads)} entries, expected {2 * rank} for rank {rank}")
    if not any(pads):
        ctx.alias(node.outputs[0], node.input(0))
        return
    x = ctx.kiln(node.input(0))
    if any(p < 0 for p in pads):  # crop first, then pad what remains
        shape = ctx.shape(node.input(0))
        crop = [max(-p, 0) for p in pads]
        done = all(p <= 0 for p in pads)
        x = ctx.add(node, "Slice", [x], role="" if done else "crop", out=node.outputs[0] if done else None,
                    starts=tuple(crop[:rank]), ends=tuple(d - c for d, c in zip(shape, crop[rank:])),
                    steps=(1,) * rank)
        if done:
            return
        pads = [max(p, 0) for p in pads]
    if mode != "constant":
        ctx.add(node, "MirrorPad", [x], out=node.outputs[0], pads=tuple(pads), mode=mode)
        return
    ctx.add(node, "Pad", [x], out=node.outputs[0], pads=tuple(pads), value=value)


@converter("Identity")
def convert_identity(ctx, node):
    ctx.alias(node.outputs[0], node.input(0))


@converter("Dropout")
def convert_dropout(ctx, node):
    """Inference Dropout is the identity, its mask all true; training mode (random) is refused."""
    training = ctx.const(node.input(2)) if node.input(2) else np.array(False)
    if training is None:
        raise node.error("training_mode (input 2) must be a constant")
    ratio = ctx.const(node.input(1)) if node.input(1) else None
    drops = ratio is None or float(np.asarray(ratio).reshape(-1)[0]) != 0.0  # ratio 0 keeps every element
    if bool(np.asarray(training).reshape(-1)[0]) and drops:
        raise node.error("training_mode=1 drops elements at random; Kiln compiles inference graphs")
    ctx.alias(node.outputs[0], node.input(0))
    if len(node.outputs) > 1 and node.outputs[1]:
        ctx.bind_const(node.outputs[1], np.ones(ctx.shape(node.input(0)), np.bool_))


@converter("Constant")
def convert_constant(ctx, node):
    attrs = node.attrs
    if "value" in attrs:
        data = tensor_array(attrs["value"], node.name)
    elif "value_float" in attrs:
        data = np.array(attrs["value_float"], np.float32)
    elif "value_floats" in attrs:
        data = np.array(attrs["value_floats"], np.float32)
    elif "value_int" in attrs:
        data = np.array(attrs["value_int"], np.int64)
    elif "value_ints" in attrs:
        data = np.array(attrs["value_ints"], np.int64)
    else:
        kinds = ", ".join(sorted(attrs)) or "none"
        raise node.error(f"constant attribute(s) {kinds} not supported (value, value_float(s), value_int(s))")
    ctx.bind_const(node.outputs[0], data)


@converter("Shape")
def convert_shape(ctx, node):
    """Shapes are static in Kiln, so Shape is a constant (start/end slice it, opset 15+)."""
    shape = ctx.shape(node.input(0))
    start, end = node.attr("start", 0), node.attr("end", None)
    ctx.bind_const(node.outputs[0], np.array(shape[start:end], np.int64))


@converter("Size")
def convert_size(ctx, node):
    ctx.bind_const(node.outputs[0], np.array(int(np.prod(ctx.shape(node.input(0)), dtype=np.int64)), np.int64))


def add_multi(ctx: ConvertContext, node: OnnxNode, op: str, inputs: list[str], outs: list[str], **attrs) -> list[str]:
    """One Kiln node with several outputs, bound to the ONNX outputs `outs` ('' = unused)."""
    names = [o if o and o not in ctx.b.g.values else ctx.fresh(f"{node.name}_out{k}") for k, o in enumerate(outs)]
    result = ctx.b.node(op, inputs, name=node.name, outputs=names, origin=(node.name,), **attrs)
    result = result if isinstance(result, list) else [result]
    for o, r in zip(outs, result):
        ctx.bind(o, r)
    return result


def _ints_input(ctx: ConvertContext, node: OnnxNode, index: int, what: str) -> list[int] | None:
    if not node.input(index):
        return None
    return [int(v) for v in ctx.require_const(node, index, what).reshape(-1)]


@converter("Slice")
def convert_slice(ctx, node):
    """starts/ends/axes are attributes before opset 10, constant inputs (with steps) after."""
    shape = ctx.shape(node.input(0))
    rank = len(shape)
    if ctx.opset < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        axes, steps = node.attr("axes"), None
    else:
        starts, ends = _ints_input(ctx, node, 1, "starts"), _ints_input(ctx, node, 2, "ends")
        axes, steps = _ints_input(ctx, node, 3, "axes"), _ints_input(ctx, node, 4, "steps")
    if starts is None or ends is None or len(starts) != len(ends):
        raise node.error("starts and ends must be given, of equal length")
    axes = list(range(len(starts))) if axes is None else [norm_axis(node, int(a), rank, "axes entry") for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    if not len(axes) == len(steps) == len(starts) or len(set(axes)) != len(axes):
        raise node.error(f"axes {axes}, starts, ends and steps do not match")
    full_s, full_e, full_t = [0] * rank, list(shape), [1] * rank
    for a, b, e, t in zip(axes, starts, ends, steps):
        full_s[a], full_e[a], full_t[a] = int(b), int(e), int(t)
    ctx.add(node, "Slice", [ctx.kiln(node.input(0))], out=node.outputs[0], starts=tuple(full_s),
            ends=tuple(full_e), steps=tuple(full_t))


@converter("Split")
def convert_split(ctx, node):
    """Sizes from the `split` attribute (before opset 13) or input; else equal parts
    (`num_outputs` from opset 18, the last part smaller when the axis does not divide)."""
    shape = ctx.shape(node.input(0))
    axis = norm_axis(node, int(node.attr("axis", 0)), len(shape))
    sizes = node.attr("split") if ctx.opset < 13 else _ints_input(ctx, node, 1, "split")
    n = len(node.outputs)
    if not sizes:
        count = int(node.attr("num_outputs", n))
        chunk = -(-shape[axis] // count)
        sizes = [chunk] * (count - 1) + [shape[axis] - chunk * (count - 1)]
        if node.attr("num_outputs") is None and shape[axis] % n:
            raise node.error(f"axis of size {shape[axis]} does not split into {n} equal parts")
    sizes = [int(v) for v in sizes]
    if len(sizes) != n or sum(sizes) != shape[axis] or any(v < 0 for v in sizes):
        raise node.error(f"split sizes {sizes} do not cut an axis of {shape[axis]} into {n} parts")
    dtype = ctx.dtype(node.input(0))
    for out, size in zip(node.outputs, sizes):  # empty parts hold no data: empty constants
        if size == 0:
            empty = tuple(0 if i == axis else d for i, d in enumerate(shape))
            ctx.bind_const(out, np.zeros(empty, np.bool_ if dtype == "bool" else dtype))
    parts = [(o, v) for o, v in zip(node.outputs, sizes) if v]
    if len(parts) == 1:
        ctx.alias(parts[0][0], node.input(0))
        return
    add_multi(ctx, node, "Split", [ctx.kiln(node.input(0))], [o for o, _ in parts], axis=axis,
              split=tuple(v for _, v in parts))


@converter("Gather")
def convert_gather(ctx, node):
    rank = len(ctx.shape(node.input(0)))
    ctx.add(node, "Gather", [ctx.kiln(node.input(0)), ctx.kiln(node.input(1))], out=node.outputs[0],
            axis=norm_axis(node, int(node.attr("axis", 0)), rank))


@converter("Tile")
def convert_tile(ctx, node):
    repeats = _ints_input(ctx, node, 1, "repeats")
    ctx.add(node, "Tile", [ctx.kiln(node.input(0))], out=node.outputs[0], repeats=tuple(repeats or ()))


@converter("Expand")
def convert_expand(ctx, node):
    shape = _ints_input(ctx, node, 1, "shape")
    ctx.add(node, "Expand", [ctx.kiln(node.input(0))], out=node.outputs[0], shape=tuple(shape or ()))


def _shuffle(ctx: ConvertContext, node: OnnxNode, split: tuple, perm: tuple, final: tuple) -> None:
    x = ctx.add(node, "Reshape", [ctx.kiln(node.input(0))], role="split", shape=split)
    y = ctx.add(node, "Transpose", [x], role="shuffle", perm=perm)
    ctx.add(node, "Reshape", [y], out=node.outputs[0], shape=final)


@converter("DepthToSpace")
def convert_depth_to_space(ctx, node):
    n, c, h, w = _nchw(ctx, node)
    b = int(node.attr("blocksize"))
    if c % (b * b):
        raise node.error(f"{c} channels do not divide by blocksize² = {b * b}")
    if node.attr("mode", "DCR") == "CRD":
        _shuffle(ctx, node, (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3), (n, c // (b * b), h * b, w * b))
    else:
        _shuffle(ctx, node, (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2), (n, c // (b * b), h * b, w * b))


@converter("SpaceToDepth")
def convert_space_to_depth(ctx, node):
    n, c, h, w = _nchw(ctx, node)
    b = int(node.attr("blocksize"))
    if h % b or w % b:
        raise node.error(f"spatial size {h}x{w} does not divide by blocksize {b}")
    perm = (0, 1, 3, 5, 2, 4) if node.attr("mode", "DCR") == "CRD" else (0, 3, 5, 1, 2, 4)
    _shuffle(ctx, node, (n, c, h // b, b, w // b, b), perm, (n, c * b * b, h // b, w // b))


def _nchw(ctx: ConvertContext, node: OnnxNode) -> tuple[int, int, int, int]:
    shape = ctx.shape(node.input(0))
    if len(shape) != 4:
        raise node.error(f"input must be NCHW (rank 4), got shape {list(shape)}")
    return shape


@converter("CenterCropPad")
def convert_center_crop_pad(ctx, node):
    """Crop (Slice) and/or zero-pad (Pad) each of `axes` around its centre to `shape`."""
    shape = ctx.shape(node.input(0))
    rank = len(shape)
    target = _ints_input(ctx, node, 1, "shape")
    axes = [norm_axis(node, int(a), rank, "axes entry") for a in node.attr("axes", list(range(rank)))]
    if target is None or len(target) != len(axes):
        raise node.error(f"shape must give one size per axis of {axes}")
    starts, ends, pads = [0] * rank, list(shape), [0] * (2 * rank)
    for a, t in zip(axes, target):
        if t < shape[a]:
            starts[a] = (shape[a] - t) // 2
            ends[a] = starts[a] + t
        elif t > shape[a]:
            pads[a] = (t - shape[a]) // 2
            pads[a + rank] = t - shape[a] - pads[a]
    x = ctx.kiln(node.input(0))
    cropped = tuple(starts) != (0,) * rank or tuple(ends) != tuple(shape)
    if cropped:
        x = ctx.add(node, "Slice", [x], role="crop", out=None if any(pads) else node.outputs[0],
                    starts=tuple(starts), ends=tuple(ends), steps=(1,) * rank)
    if any(pads):
        ctx.add(node, "Pad", [x], out=node.outputs[0], pads=tuple(pads), value=0.0)
    elif not cropped:
        ctx.alias(node.outputs[0], node.input(0))
