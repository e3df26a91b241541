"""Control flow resolved at import time: If, Loop and Scan become straight-line Kiln ops.

- If with a constant condition is its chosen branch, inlined. With a condition computed at run
  time both branches are computed and each output selected with Where (ONNX ops have no side
  effects, so computing the branch not taken changes nothing but time); the two branches must
  then give each output one shape.
- Loop with a constant trip count and/or a condition that is constant in every iteration is
  unrolled (at most `MAX_UNROLL` iterations); scan outputs are the iterations' values stacked.
- Scan is unrolled over the length of its scan axis (opset 8's batched form one batch entry
  at a time).
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_sequence import is_sequence, make_sequence, sequence_of
from codegen.frontends.onnx.ops_shape import norm_axis
from codegen.frontends.onnx.ops_value_shaped import specialize_hint
from codegen.frontends.onnx.reader import OnnxNode
from codegen.frontends.onnx.subgraph import MAX_UNROLL, graph_attr, inline_graph, slices, stack


@converter("If")
def convert_if(ctx, node):
    cond = ctx.const(node.input(0))
    if cond is not None:
        branch = "then_branch" if bool(np.asarray(cond).reshape(-1)[0]) else "else_branch"
        for out, value in zip(node.outputs, inline_graph(ctx, node, graph_attr(node, branch), [], branch)):
            ctx.alias(out, value)
        return
    if int(np.prod(ctx.shape(node.input(0)))) != 1:
        raise node.error("the condition must hold one element")
    then = inline_graph(ctx, node, graph_attr(node, "then_branch"), [], "then_branch")
    other = inline_graph(ctx, node, graph_attr(node, "else_branch"), [], "else_branch")
    flag = ctx.kiln(node.input(0))
    if ctx.shape(node.input(0)) != ():
        flag = ctx.add(node, "Reshape", [flag], role="cond_scalar", shape=())
    for k, (out, a, b) in enumerate(zip(node.outputs, then, other)):
        if not out:
            continue
        if not (is_sequence(ctx, a) and is_sequence(ctx, b)):
            _select(ctx, node, flag, a, b, out, f"select{k}", f"output {k}")
            continue
        items_a, items_b = sequence_of(ctx, node, a), sequence_of(ctx, node, b)
        if len(items_a) != len(items_b):
            raise node.error(f"output {k} is a sequence of {len(items_a)} tensors in one branch and {len(items_b)} "
                             "in the other; with a condition computed at run time Kiln needs one length")
        chosen = [f"{node.name}::select{k}_{j}" for j in range(len(items_a))]
        for j, (x, y, name) in enumerate(zip(items_a, items_b, chosen)):
            _select(ctx, node, flag, x, y, name, f"select{k}_{j}", f"element {j} of output {k}")
        make_sequence(ctx, out, chosen)


def _select(ctx: ConvertContext, node: OnnxNode, flag: str, a: str, b: str, out: str, role: str, what: str) -> None:
    """out = Where(flag, a, b) for two branch values of one type and shape."""
    if ctx.shape(a) != ctx.shape(b) or ctx.dtype(a) != ctx.dtype(b):
        raise node.error(f"{what} is {ctx.dtype(a)}{list(ctx.shape(a))} in one branch and "
                         f"{ctx.dtype(b)}{list(ctx.shape(b))} in the other; with a condition computed at "
                         "run time Kiln needs one static type and shape")
    ctx.add(node, "Where", [flag, ctx.kiln(a), ctx.kiln(b)], out=out, role=role)


@converter("Loop")
def convert_loop(ctx, node):
    """Unrolled while the trip count and condition are known at compile time."""
    body = graph_attr(node, "body")
    trip = ctx.const(node.input(0)) if node.input(0) else None
    if node.input(0) and trip is None:
        raise node.error("the trip count (input 0) must be a constant: Kiln unrolls loops at compile time"
                         + specialize_hint(ctx, node.input(0)))
    trip = None if trip is None else int(np.asarray(trip).reshape(-1)[0])
    carried = list(node.inputs[2:])
    n_carried = len(carried)
    n_scan = len(body.output) - 1 - n_carried
    cond = node.input(1)
    if not cond:
        cond = f"{node.name}::always"
        ctx.bind_const(cond, np.array(True))
    if trip is None and not node.input(1):
        raise node.error("has neither a trip count nor a condition: it never ends")
    scanned: list[list[str]] = [[] for _ in range(n_scan)]
    i = 0
    while trip is None or i < trip:
        flag = ctx.const(cond)
        if flag is None:
            raise node.error("the loop condition is computed at run time; Kiln unrolls only loops whose "
                             "iteration count is known at compile time")
        if not bool(np.asarray(flag).reshape(-1)[0]):
            break
        if i >= MAX_UNROLL:
            raise node.error(f"runs more than {MAX_UNROLL} iterations; Kiln unrolls loops and stops there")
        counter = f"{node.name}::iter{i}"
        ctx.bind_const(counter, np.array(i, np.int64))
        outs = inline_graph(ctx, node, body, [counter, cond, *carried], f"iter{i}")
        cond, carried = outs[0], outs[1:1 + n_carried]
        for k, value in enumerate(outs[1 + n_carried:]):
            scanned[k].append(value)
        i += 1
    for out, value in zip(node.outputs, carried):
        ctx.alias(out, value)
    for k, (out, values) in enumerate(zip(node.outputs[n_carried:], scanned)):
        if not out:
            continue
        if not values:
            raise node.error(f"runs no iteration, so scan output '{out}' would be empty (Kiln has no empty "
                             "tensors)")
        stack(ctx, node, values, 0, out, f"scan{k}")


@converter("Scan")
def convert_scan(ctx, node):
    body = graph_attr(node, "body")
    n_scan = int(node.attr("num_scan_inputs", 0))
    if not 0 < n_scan < len(node.inputs) + (ctx.opset < 9):
        raise node.error(f"num_scan_inputs={n_scan} does not fit {len(node.inputs)} inputs")
    if ctx.opset < 9:
        _scan_batched(ctx, node, body, n_scan)
        return
    states, scans = node.inputs[:len(node.inputs) - n_scan], node.inputs[len(node.inputs) - n_scan:]
    n_out_scan = len(body.output) - len(states)
    in_axes = [norm_axis(node, int(a), len(ctx.shape(s)), "scan_input_axes")
               for a, s in zip(node.attr("scan_input_axes", [0] * n_scan), scans)]
    out_axes = list(node.attr("scan_output_axes", [0] * n_out_scan))
    finals, outs = unroll_scan(ctx, node, body, states, scans, in_axes,
                               list(node.attr("scan_input_directions", [0] * n_scan)),
                               list(node.attr("scan_output_directions", [0] * n_out_scan)), "")
    for out, value in zip(node.outputs, finals):
        ctx.alias(out, value)
    for k, (out, values) in enumerate(zip(node.outputs[len(states):], outs)):
        if out:
            rank = len(ctx.shape(values[0])) + 1
            stack(ctx, node, values, norm_axis(node, int(out_axes[k]), rank, "scan_output_axes"), out, f"scan{k}")


def unroll_scan(ctx: ConvertContext, node: OnnxNode, body, states: list[str], scans: list[str],
                in_axes: list[int], in_dirs: list[int], out_dirs: list[int], tag: str):
    """The final states and, per scan output, the iterations' values in output order."""
    lengths = {ctx.shape(s)[a] for s, a in zip(scans, in_axes)}
    if len(lengths) != 1:
        raise node.error(f"scan inputs have different lengths {sorted(lengths)} along their scan axes")
    length = lengths.pop()
    if length > MAX_UNROLL:
        raise node.error(f"scans {length} steps; Kiln unrolls scans up to {MAX_UNROLL} steps")
    if length == 0:
        raise node.error("scans an empty axis (Kiln has no empty tensors)")
    steps = [slices(ctx, node, s, a, f"{tag}in{j}_") for j, (s, a) in enumerate(zip(scans, in_axes))]
    steps = [parts[::-1] if d else parts for parts, d in zip(steps, in_dirs)]
    outs: list[list[str]] = [[] for _ in range(len(body.output) - len(states))]
    for t in range(length):
        result = inline_graph(ctx, node, body, [*states, *(parts[t] for parts in steps)], f"{tag}step{t}")
        states = result[:len(states)]
        for k, value in enumerate(result[len(states):]):
            outs[k].append(value)
    return states, [values[::-1] if d else values for values, d in zip(outs, out_dirs + [0] * len(outs))]


def _scan_batched(ctx: ConvertContext, node: OnnxNode, body, n_scan: int) -> None:
    """Opset 8: every input has a leading batch axis, scanned along axis 1, each batch entry
    on its own; `sequence_lens` must be absent or all full lengths."""
    states = node.inputs[1:len(node.inputs) - n_scan]
    scans = node.inputs[len(node.inputs) - n_scan:]
    batch, length = ctx.shape(scans[0])[:2]
    if node.input(0):
        lens = ctx.require_const(node, 0, "sequence_lens")
        if np.any(np.asarray(lens).reshape(-1) != length):
            raise node.error("sequence_lens shorter than the scan axis give outputs of several lengths")
    n_out_scan = len(body.output) - len(states)
    dirs = list(node.attr("directions", [0] * n_scan))
    per_batch = [slices(ctx, node, name, 0, f"batch{j}_") for j, name in enumerate([*states, *scans])]
    finals: list[list[str]] = [[] for _ in states]
    outs: list[list[str]] = [[] for _ in range(n_out_scan)]
    for b in range(batch):
        pieces = [p[b] for p in per_batch]
        last, scanned = unroll_scan(ctx, node, body, pieces[:len(states)], pieces[len(states):],
                                    [0] * n_scan, dirs, [0] * n_out_scan, f"b{b}_")
        for k, value in enumerate(last):
            finals[k].append(value)
        for k, values in enumerate(scanned):
            stacked = f"{node.name}::b{b}_scan{k}"
            stack(ctx, node, values, 0, stacked, f"b{b}_scan{k}")
            outs[k].append(stacked)
    for k, (out, values) in enumerate(zip(node.outputs, finals + outs)):
        if out:
            stack(ctx, node, values, 0, out, f"batch_out{k}")
