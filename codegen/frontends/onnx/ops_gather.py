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
    reduction = node.attr("reduction", "none")
    if reduction != "none":
        raise node.error(f"reduction '{reduction}' is not supported (only 'none')")
    take(ctx, node, (0, 1) if node.op_type == "TensorScatter" else (0, 2))


@converter("EyeLike")
def convert_eye_like(ctx, node):
    """A constant: ones on diagonal k of the input's 2-D shape (the input's values are unused)."""
    rows, cols = ctx.shape(node.input(0))
    dtype = KILN_DTYPES.get(node.attr("dtype"), ctx.dtype(node.input(0))) if node.attr("dtype") is not None \
        else ctx.dtype(node.input(0))
    eye = np.eye(rows, cols, k=int(node.attr("k", 0)))
    ctx.bind_const(node.outputs[0], eye.astype(np.bool_ if dtype == "bool" else dtype))
