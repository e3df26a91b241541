"""Inlining an ONNX subgraph (If branch, Loop or Scan body) into the graph being built.

Kiln compiles straight-line code, so control flow is resolved at import time: a branch or
one loop iteration becomes a copy of the subgraph's nodes, converted like top-level nodes
(constants still fold). Every name the subgraph defines gets the copy's prefix, so that
unrolled iterations never collide; names it reads from enclosing scopes stay as they are
(ONNX forbids a subgraph to redefine an outer name), including inside nested subgraphs.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx

from codegen.frontends.onnx.context import CONVERTERS, ConvertContext
from codegen.frontends.onnx.ops_shape import add_multi
from codegen.frontends.onnx.reader import OnnxNode, _node, tensor_array

# Iterations a Loop or Scan may unroll to (each copies the whole body into the C code).
MAX_UNROLL = 64


def graph_attr(node: OnnxNode, name: str) -> onnx.GraphProto:
    """The subgraph attribute `name` of `node` (KilnError when it is missing)."""
    graph = node.attr(name)
    if not isinstance(graph, onnx.GraphProto):
        raise node.error(f"attribute '{name}' (a subgraph) is missing")
    return graph


def inline_graph(ctx: ConvertContext, owner: OnnxNode, graph: onnx.GraphProto, args: Sequence[str],
                 tag: str) -> list[str]:
    """Convert the nodes of `graph` with its formal inputs bound to the ONNX tensors `args`;
    returns the ONNX names now holding the subgraph's outputs."""
    from codegen.frontends.onnx.convert import _folds, convert_node

    formals = [vi.name for vi in graph.input]
    if len(formals) != len(args):
        raise owner.error(f"its {tag} subgraph takes {len(formals)} inputs, {len(args)} are given")
    if graph.sparse_initializer:
        raise owner.error(f"its {tag} subgraph has sparse initializers, which Kiln does not read")
    prefix = f"{owner.name}::{tag}"
    names = dict(zip(formals, args))
    for t in graph.initializer:
        names[t.name] = f"{prefix}::{t.name}"
        ctx.bind_const(names[t.name], tensor_array(t, owner.name))
    for k, proto in enumerate(graph.node):
        names.update((o, f"{prefix}::{o}") for o in proto.output if o)
        copy = rename_node(proto, names)
        copy.name = f"{prefix}::{proto.name or f'{proto.op_type}_{k}'}"
        node = _node(copy, k)
        consts = {i for i in node.inputs if i and ctx.is_const(i)}
        if node.full_type not in CONVERTERS and not _folds(node, consts):
            raise owner.error(f"its {tag} subgraph uses {node.full_type}, which Kiln does not support")
        convert_node(ctx, node)
    outs = [names.get(vi.name, vi.name) for vi in graph.output]
    for vi, out in zip(graph.output, outs):
        if not ctx.known(out):
            raise owner.error(f"output '{vi.name}' of its {tag} subgraph is computed by no node")
    return outs


def rename_node(proto: onnx.NodeProto, names: dict[str, str]) -> onnx.NodeProto:
    """A copy of `proto` reading and writing the renamed tensors, nested subgraphs included."""
    copy = onnx.NodeProto()
    copy.CopyFrom(proto)
    _rename_in_place(copy, names)
    return copy


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    """The graphs held in the node's attributes (If's branches, Loop's and Scan's bodies)."""
    return [g for attr in node.attribute for g in ([attr.g] if attr.HasField("g") else list(attr.graphs))]


def _rename_in_place(node: onnx.NodeProto, names: dict[str, str]) -> None:
    node.input[:] = [names.get(i, i) if i else i for i in node.input]
    node.output[:] = [names.get(o, o) if o else o for o in node.output]
    for g in _subgraphs(node):
        _rename_free(g, names)


def _rename_free(graph: onnx.GraphProto, names: dict[str, str]) -> None:
    """Rename the outer tensors a nested subgraph reads (its own names are never in `names`)."""
    for inner in graph.node:
        inner.input[:] = [names.get(i, i) if i else i for i in inner.input]
        for g in _subgraphs(inner):
            _rename_free(g, names)
    for vi in graph.output:
        vi.name = names.get(vi.name, vi.name)


# -- moving tensors in and out of iterations -----------------------------------------------------
def slices(ctx: ConvertContext, owner: OnnxNode, name: str, axis: int, tag: str) -> list[str]:
    """ONNX names of the slices of tensor `name` along `axis` (that axis removed), in order."""
    shape = ctx.shape(name)
    count = shape[axis]
    outs = [f"{owner.name}::{tag}{t}" for t in range(count)]
    data = ctx.const(name)
    if data is not None:
        for t, out in enumerate(outs):
            ctx.bind_const(out, np.take(data, t, axis=axis))
        return outs
    inner = shape[:axis] + shape[axis + 1:]
    src = ctx.kiln(name)
    parts = [src] if count == 1 else add_multi(ctx, owner, "Split", [src], [""] * count, axis=axis,
                                                 split=(1,) * count)
    for t, (part, out) in enumerate(zip(parts, outs)):
        ctx.add(owner, "Reshape", [part], out=out, role=f"{tag}{t}", shape=inner)
    return outs


def stack(ctx: ConvertContext, owner: OnnxNode, names: Sequence[str], axis: int, out: str, tag: str) -> None:
    """Bind ONNX tensor `out` to the tensors `names` stacked along a new `axis`."""
    shapes = {ctx.shape(n) for n in names}
    if len(shapes) != 1:
        raise owner.error(f"iterations give output '{out}' different shapes {sorted(shapes)}; Kiln needs "
                          "one static shape to stack them")
    data = [ctx.const(n) for n in names]
    if all(d is not None for d in data):
        ctx.bind_const(out, np.stack(data, axis=axis))
        return
    shape = list(shapes.pop())
    shape.insert(axis, 1)
    parts = [ctx.add(owner, "Reshape", [ctx.kiln(n)], role=f"{tag}{t}_expand", shape=tuple(shape))
             for t, n in enumerate(names)]
    if len(parts) == 1:
        ctx.bind(out, parts[0])
    else:
        ctx.add(owner, "Concat", parts, out=out, role=f"{tag}_stack", axis=axis)
