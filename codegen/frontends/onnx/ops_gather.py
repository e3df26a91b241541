"""Element gathers and scatters with constant indices: GatherElements (also with run-time
indices), GatherND, Compress,
ReverseSequence, Trilu, ScatterND, ScatterElements / Scatter (no reduction), TensorScatter
(constant write indices), and EyeLike.

They only move elements, to places known at compile time. Instead of re-implementing each,
the frontend runs ONNX's reference implementation of the node once on the element
positions (1, 2, 3, ... in place of the data, the updates numbered on after the data) and
gets, for every output element, which input element it is, or 0 for a zero it made. That
table becomes one Kiln Take (of the data, or of data and updates concatenated).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.reader import OnnxNode, _short
from codegen.frontends.onnx.ops_elementwise import KILN_DTYPES


def positions(ctx: ConvertContext, node: OnnxNode, sources: tuple[int, ...]) -> np.ndarray:
    """For each output element of `node`, the 0-based position of the source element it
    copies (sources numbered one after the other), or -1 where the node writes a zero."""
    feeds, offset = {}, 0
    for i, name in enumerate(node.inputs):
        if not name:
            continue
        if i in sources:
            shape = ctx.shape(name)
            n = int(np.prod(shape, dtype=np.int64))
            feeds[name] = (np.arange(n, dtype=np.int64) + offset + 1).reshape(shape)
            offset += n
        else:
            data = ctx.const(name)
            if data is None:
                raise node.error(f"input {i} ('{name}') must be a constant")
            feeds[name] = data
    proto, opset = node.proto, ctx.opset
    if node.op_type == "Scatter":  # ScatterElements under its pre-opset-11 name
        proto = onnx.NodeProto()
        proto.CopyFrom(node.proto)
        proto.op_type, opset = "ScatterElements", max(opset, 11)
    try:
        out = ReferenceEvaluator(proto, opsets={"": opset}).run(None, feeds)[0]
    except Exception as err:
        raise node.error(f"cannot compute the element positions ({_short(err)})") from None
    return np.asarray(out, np.int64) - 1


def take(ctx: ConvertContext, node: OnnxNode, sources: tuple[int, ...]) -> None:
    table = positions(ctx, node, sources)
    if len(sources) == 1:
        data = ctx.kiln(node.input(sources[0]))
    else:
        flat = [ctx.add(node, "Reshape", [ctx.kiln(node.input(i))], role=f"flat{i}",
                        shape=(int(np.prod(ctx.shape(node.input(i)), dtype=np.int64)),)) for i in sources]
        data = ctx.add(node, "Concat", flat, role="sources", axis=0)
    ctx.add(node, "Take", [data, ctx.weight(node, "positions", table)], out=node.outputs[0])


@converter("GatherElements", "GatherND", "Compress", "ReverseSequence", "Trilu")
def convert_gather_like(ctx, node):
    """Take with the positions table; GatherElements with indices computed at run time is
    Kiln's GatherElements."""
    if node.op_type == "GatherElements" and ctx.const(node.input(1)) is None:
        rank = len(ctx.shape(node.input(0)))
        axis = int(node.attr("axis", 0))
        ctx.add(node, "GatherElements", [ctx.kiln(node.input(0)), ctx.kiln(node.input(1))], out=node.outputs[0],
                axis=axis + rank if axis < 0 else axis)
        return
    take(ctx, node, (0,))


@converter("ScatterND", "ScatterElements", "Scatter", "TensorScatter")
def convert_scatter(ctx, node):
    """No reduction: a Take of data and updates; with one: ScatterReduce with the target
    element of every update."""
    reduction = node.attr("reduction", "none")
    if reduction == "none":
        take(ctx, node, (0, 1) if node.op_type == "TensorScatter" else (0, 2))
        return
    if reduction not in ("add", "mul", "max", "min"):
        raise node.error(f"reduction '{reduction}' is not add, mul, max or min")
    offsets = scatter_offsets(node, ctx.shape(node.input(0)), ctx.require_const(node, 1, "indices"),
                              ctx.shape(node.input(2)))
    ctx.add(node, "ScatterReduce", [ctx.kiln(node.input(0)), ctx.kiln(node.input(2)),
                                    ctx.weight(node, "offsets", offsets)], out=node.outputs[0], reduction=reduction)


def scatter_offsets(node: OnnxNode, shape, indices: np.ndarray, updates_shape) -> np.ndarray:
    """The flat data element each update of ScatterElements / ScatterND lands on."""
    indices = np.asarray(indices, np.int64)
    if node.op_type == "ScatterND":
        k = indices.shape[-1]
        tuples = indices.reshape(-1, k)
        tuples = np.where(tuples < 0, tuples + np.array(shape[:k]), tuples)
        inner = int(np.prod(shape[k:], dtype=np.int64))
        base = np.ravel_multi_index(tuple(tuples.T), tuple(shape[:k])) * inner
        return (base[:, None] + np.arange(inner)).reshape(tuple(updates_shape))
    axis = int(node.attr("axis", 0)) % len(shape)
    grid = list(np.indices(indices.shape))
    grid[axis] = np.where(indices < 0, indices + shape[axis], indices)
    return np.ravel_multi_index(tuple(grid), tuple(shape)).astype(np.int64)


@converter("Col2Im")
def convert_col2im(ctx, node):
    """Column blocks [N, C * prod(block), L] summed back into the image [N, C, *image]: a
    ScatterReduce(add) of every block element onto zeros (elements in the padding dropped)."""
    n, cb, length = ctx.shape(node.input(0))
    image = [int(v) for v in ctx.require_const(node, 1, "image_shape").reshape(-1)]
    block = [int(v) for v in ctx.require_const(node, 2, "block_shape").reshape(-1)]
    r = len(image)
    dil = [int(v) for v in node.attr("dilations", [1] * r)]
    pads = [int(v) for v in node.attr("pads", [0] * (2 * r))]
    strides = [int(v) for v in node.attr("strides", [1] * r)]
    kernel = int(np.prod(block))
    c = cb // kernel
    grid = [(image[i] + pads[i] + pads[i + r] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1 for i in range(r)]
    if c * kernel != cb or int(np.prod(grid)) != length:
        raise node.error(f"input {[n, cb, length]} does not fit image {image} with block {block}")
    sum_blocks(ctx, node, ctx.kiln(node.input(0)), (n, c), image, grid, block, strides, pads[:r], dil,
               out=node.outputs[0])


def sum_blocks(ctx, node, columns: str, batch_channels: tuple[int, int], image: list[int], grid: list[int],
               block: list[int], strides: list[int], begins: list[int], dil: list[int], out: str | None = None) -> str:
    """Column blocks [N, C * prod(block), prod(grid)] summed into an image [N, C, *image]: block
    element t of grid spot s lands at s * stride - begin + t * dilation (dropped outside the
    image), a ScatterReduce(add) onto zeros. Col2Im, and ConvTranspose beyond 2-D."""
    n, c = batch_channels
    r = len(image)
    taps = np.indices(block).reshape(r, -1)        # [r, kernel]
    spots = np.indices(grid).reshape(r, -1)        # [r, L]
    pos = spots[:, None, :] * np.array(strides)[:, None, None] - np.array(begins)[:, None, None] \
        + taps[:, :, None] * np.array(dil)[:, None, None]  # [r, kernel, L]
    inside = np.all((pos >= 0) & (pos < np.array(image)[:, None, None]), axis=0)
    flat = np.ravel_multi_index(tuple(np.clip(pos, 0, np.array(image)[:, None, None] - 1)), tuple(image))
    per_image = int(np.prod(image))
    offsets = np.where(inside, flat, -1)[None, None] + (np.arange(n)[:, None, None, None] * c
                                                         + np.arange(c)[None, :, None, None]) * per_image
    offsets = np.where(np.broadcast_to(inside, offsets.shape), offsets, -1).reshape(n, c * taps.shape[1], -1)
    zeros = ctx.weight(node, "zeros", np.zeros((n, c, *image), np.float32))
    return ctx.add(node, "ScatterReduce", [zeros, columns, ctx.weight(node, "offsets", offsets)], out=out,
                   reduction="add")


@converter("EyeLike")
def convert_eye_like(ctx, node):
    """A constant: ones on diagonal k of the input's 2-D shape (the input's values are unused)."""
    rows, cols = ctx.shape(node.input(0))
    dtype = KILN_DTYPES.get(node.attr("dtype"), ctx.dtype(node.input(0))) if node.attr("dtype") is not None \
        else ctx.dtype(node.input(0))
    eye = np.eye(rows, cols, k=int(node.attr("k", 0)))
    ctx.bind_const(node.outputs[0], eye.astype(np.bool_ if dtype == "bool" else dtype))
