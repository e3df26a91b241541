"""Shape and data-movement ops: Reshape family, Transpose, Concat, Pad, pass-throughs, constants.

Flatten, Squeeze, Unsqueeze and Reshape all become one Kiln Reshape with the static output
shape resolved here; axes and shapes must be constants (attributes before opset 13/5,
inputs after).
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
    ins = [i for i in node.inputs if i]
    if not ins:
        raise node.error("has no inputs")
    if node.attr("axis") is None:
        raise node.error("attribute 'axis' is missing")
    axis = norm_axis(node, int(node.attr("axis")), len(ctx.shape(ins[0])))
    ctx.add(node, "Concat", [ctx.kiln(i) for i in ins], out=node.outputs[0], axis=axis)


@converter("Pad")
def convert_pad(ctx, node):
    mode = node.attr("mode", "constant")
    if mode != "constant":
        raise node.error(f"mode '{mode}' is not supported (only 'constant')")
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
    if any(p < 0 for p in pads):
        raise node.error(f"negative pads {pads} (cropping) are not supported")
    if not any(pads):
        ctx.alias(node.outputs[0], node.input(0))
        return
    ctx.add(node, "Pad", [ctx.kiln(node.input(0))], out=node.outputs[0], pads=tuple(pads), value=value)


@converter("Identity", "Dropout")
def convert_identity(ctx, node):
    """Inference-time no-ops: the output is the input (Dropout's mask output is refused)."""
    ctx.alias(node.outputs[0], node.input(0))


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
