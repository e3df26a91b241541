"""Sequences resolved at import time: SequenceEmpty / Construct / At / Insert / Erase / Length,
SplitToSequence, ConcatFromSequence and SequenceMap.

Kiln's values are tensors, so a sequence of static length is a list of ONNX tensor names,
held per conversion. The ONNX name of a sequence is bound to a marker value that stands for
that list (`sequence::<name>`, a placeholder constant), so that Identity, If branches, Loop
state and Optional pass sequences on as they pass tensors. Positions (SequenceAt, Insert,
Erase) and split sizes must be constants.
"""

from __future__ import annotations

import weakref

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_shape import add_multi, norm_axis
from codegen.frontends.onnx.reader import OnnxNode
from codegen.frontends.onnx.subgraph import graph_attr, inline_graph, slices, stack

MARKER = "sequence::"
_LISTS: "weakref.WeakKeyDictionary[ConvertContext, dict[str, list[str]]]" = weakref.WeakKeyDictionary()


def make_sequence(ctx: ConvertContext, out: str, items: list[str]) -> None:
    """Bind ONNX name `out` to the sequence of ONNX tensors `items`."""
    if out:  # the marker is a one-byte placeholder constant, which no op reads (dead code removes it)
        marker = ctx.new_const(ctx.fresh(f"{MARKER}{out}"), np.zeros((), np.uint8))
        _LISTS.setdefault(ctx, {})[marker] = list(items)
        ctx.bind(out, marker)


def sequence_of(ctx: ConvertContext, node: OnnxNode, name: str) -> list[str]:
    marker = ctx.kiln(name) if name and ctx.is_bound(name) else ""
    items = _LISTS.get(ctx, {}).get(marker)
    if items is None:
        raise node.error(f"input '{name}' is not a sequence Kiln knows the length of")
    return list(items)


def _position(ctx: ConvertContext, node: OnnxNode, index: int, length: int, default: int, insert: bool) -> int:
    if not node.input(index):
        return default
    pos = int(np.asarray(ctx.require_const(node, index, "position")).reshape(-1)[0])
    top = length if insert else length - 1
    if not -length <= pos <= top:
        raise node.error(f"position {pos} is outside a sequence of {length} tensors")
    return pos + length if pos < 0 else pos


@converter("SequenceEmpty")
def convert_sequence_empty(ctx, node):
    make_sequence(ctx, node.outputs[0], [])


@converter("SequenceConstruct")
def convert_sequence_construct(ctx, node):
    make_sequence(ctx, node.outputs[0], [i for i in node.inputs if i])


@converter("SequenceAt")
def convert_sequence_at(ctx, node):
    items = sequence_of(ctx, node, node.input(0))
    if not items:
        raise node.error("the sequence is empty")
    ctx.alias(node.outputs[0], items[_position(ctx, node, 1, len(items), 0, False)])


@converter("SequenceInsert")
def convert_sequence_insert(ctx, node):
    items = sequence_of(ctx, node, node.input(0))
    items.insert(_position(ctx, node, 2, len(items), len(items), True), node.input(1))
    make_sequence(ctx, node.outputs[0], items)


@converter("SequenceErase")
def convert_sequence_erase(ctx, node):
    items = sequence_of(ctx, node, node.input(0))
    if not items:
        raise node.error("the sequence is empty")
    del items[_position(ctx, node, 1, len(items), len(items) - 1, False)]
    make_sequence(ctx, node.outputs[0], items)


@converter("SequenceLength")
def convert_sequence_length(ctx, node):
    ctx.bind_const(node.outputs[0], np.array(len(sequence_of(ctx, node, node.input(0))), np.int64))


@converter("SplitToSequence")
def convert_split_to_sequence(ctx, node):
    """Without `split`: pieces of one along `axis` (removed unless keepdims); a scalar split:
    pieces of that size (the last one smaller); a 1-D split: those sizes."""
    x = node.input(0)
    shape = ctx.shape(x)
    axis = norm_axis(node, int(node.attr("axis", 0)), len(shape))
    if not node.input(1):
        pieces = slices(ctx, node, x, axis, "piece")
        if node.attr("keepdims", 1):
            kept = []
            for k, piece in enumerate(pieces):
                name = f"{node.name}::kept{k}"
                ctx.add(node, "Reshape", [ctx.kiln(piece)], out=name, role=f"keep{k}",
                        shape=shape[:axis] + (1,) + shape[axis + 1:])
                kept.append(name)
            pieces = kept
        make_sequence(ctx, node.outputs[0], pieces)
        return
    split = np.asarray(ctx.require_const(node, 1, "split")).astype(np.int64)
    if split.ndim == 0:
        size = int(split)
        sizes = [size] * (shape[axis] // size) + ([shape[axis] % size] if shape[axis] % size else [])
    else:
        sizes = [int(s) for s in split]
    if sum(sizes) != shape[axis] or min(sizes) <= 0:
        raise node.error(f"split sizes {sizes} do not cut an axis of {shape[axis]}")
    names = [f"{node.name}::part{k}" for k in range(len(sizes))]
    if len(sizes) == 1:
        ctx.alias(names[0], x)
    else:
        add_multi(ctx, node, "Split", [ctx.kiln(x)], names, axis=axis, split=tuple(sizes))
    make_sequence(ctx, node.outputs[0], names)


@converter("ConcatFromSequence")
def convert_concat_from_sequence(ctx, node):
    items = sequence_of(ctx, node, node.input(0))
    if not items:
        raise node.error("the sequence is empty (Kiln has no empty tensors)")
    rank = len(ctx.shape(items[0]))
    if node.attr("new_axis", 0):
        stack(ctx, node, items, norm_axis(node, int(node.attr("axis")), rank + 1), node.outputs[0], "stack")
        return
    axis = norm_axis(node, int(node.attr("axis")), rank)
    if len(items) == 1:
        ctx.alias(node.outputs[0], items[0])
    else:
        ctx.add(node, "Concat", [ctx.kiln(i) for i in items], out=node.outputs[0], axis=axis)


@converter("SequenceMap")
def convert_sequence_map(ctx, node):
    """The body once per element; additional sequence inputs give their element of the same
    position, tensors are passed whole."""
    first = sequence_of(ctx, node, node.input(0))
    extra = [sequence_of(ctx, node, n) if is_sequence(ctx, n) else n for n in node.inputs[1:]]
    for e in extra:
        if isinstance(e, list) and len(e) != len(first):
            raise node.error(f"input sequences have {len(first)} and {len(e)} tensors")
    outs: list[list[str]] = [[] for _ in node.outputs]
    for k, item in enumerate(first):
        args = [item] + [e[k] if isinstance(e, list) else e for e in extra]
        for j, value in enumerate(inline_graph(ctx, node, graph_attr(node, "body"), args, f"item{k}")):
            outs[j].append(value)
    for out, items in zip(node.outputs, outs):
        make_sequence(ctx, out, items)


def is_sequence(ctx: ConvertContext, name: str) -> bool:
    return bool(name) and ctx.is_bound(name) and ctx.kiln(name) in _LISTS.get(ctx, {})
