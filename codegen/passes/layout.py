"""Layout: push Transpose nodes down through layout-agnostic ops and cancel inverse pairs.

The ONNX frontend wraps every NCHW spatial op in Transpose(0,2,3,1) ... Transpose(0,3,1,2),
so between two convolutions there is an NHWC -> NCHW transpose, the NCHW ops of the model,
and an NCHW -> NHWC transpose. This pass moves each transpose below the ops that do not care
about the layout, rewriting them for the permuted tensor, until it meets its inverse (the
pair becomes nothing), a graph output, or an op that cares. What is moved through:

- elementwise unary ops (kind ELEMENTWISE with one input and no axis attribute: Clip,
  Sigmoid, Quantize, Dequantize, ...);
- broadcasting binary ops (kind BROADCAST, no axis attribute) whose other operand is a
  constant (permuted at compile time), the same transpose of another value, a value whose
  inverse transpose the graph computes already (read that instead: nothing is added) or a
  graph input (which then gets the inverse transpose: a boundary transpose);
- BatchNorm and Softmax (axis remapped), Concat (every input transposed alike or constant;
  axis remapped), Pad (pads permuted), reductions with `axes`/`keepdims` such as Mean;
- a Reshape that provably commutes: it only merges or splits runs of axes that are adjacent,
  in the same order, in both layouts (Flatten after a global pool, the frontend's views of
  1-D convolutions as 2-D ones), and becomes a Reshape of the untransposed tensor;
- a Flatten (Reshape to [N, K]) of a transposed tensor read only by a FullyConnected with
  constant weights: the weights' columns are permuted instead.

A transpose with several readers moves only when every reader lets it through. Two
transposes in a row compose into one (nothing when the composition is the identity). At the
end, transposes that move no data (only size-1 axes change place) become Reshapes. When the
moves leave more distinct transposes than there were (boundary transposes that met no
inverse), the graph is kept as it was: the pass never adds transposes.

In a CNN the transposes left sit at the boundary, reading a graph input or writing a graph
output: an ONNX model keeps its NCHW inputs and outputs. A transpose whose reader needs the
NCHW order (say an NCHW flatten read by something else than a FullyConnected) stays.

Needs: a verified graph. Keeps: every value of every graph output, graph input/output names
and layouts.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.ops.registry import OpKind, get_op
from codegen.ops.transpose import permutation
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import (add_const, clone, insert_after, insert_before, make_node,
                                       prune_dead_nodes, substitute)

Perm = tuple[int, ...]
_AXIS_ATTRS = {"axis", "axes", "perm", "pads", "shape"}


def _inverse(p: Perm) -> Perm:
    inv = [0] * len(p)
    for i, a in enumerate(p):
        inv[a] = i
    return tuple(inv)


def _suffix(p: Perm) -> str:
    """A readable name suffix for a value laid out by `p` relative to the original."""
    return "_nhwc" if tuple(p) == (0, 2, 3, 1) else "_t" + "".join(map(str, p))


def _perm_of(g: Graph, node: Node) -> Perm:
    return permutation(node, len(g.values[node.inputs[0]].shape))


def _is_identity(p: Perm) -> bool:
    return tuple(p) == tuple(range(len(p)))


@dataclasses.dataclass
class _Sink:
    """How to rewrite one reader of a transposed value for the untransposed one."""

    inputs: list[str]
    attrs: dict
    out_perm: Perm
    pre: list[Node]  # inverse transposes of other operands (placed before the reader)


class _Ctx:
    def __init__(self, g: Graph):
        self.g = g
        self.prod = g.producers()
        # May a graph input get a transpose so that the one being moved can pass a binary op?
        # Not when the moved one itself reads a graph input (two inputs would trade forever).
        self.boundary_ok = True

    def transposed(self, name: str) -> tuple[str, Perm] | None:
        """(x, p) when `name` is Transpose(x, p)."""
        t = self.prod.get(name)
        if t is None or t.op != "Transpose":
            return None
        return t.inputs[0], _perm_of(self.g, t)


def _permute_const(ctx: _Ctx, name: str, p: Perm) -> str | None:
    """A constant c' with Transpose(c', p) == c broadcast to rank len(p); None if impossible."""
    v = ctx.g.values[name]
    r = len(p)
    if len(v.shape) > r or (v.quant is not None and v.quant.per_channel):
        return None
    if all(d == 1 for d in v.shape):
        return name  # a scalar-like constant broadcasts the same in any layout
    data = v.data.reshape((1,) * (r - len(v.shape)) + tuple(v.shape))
    return add_const(ctx.g, f"{name}{_suffix(_inverse(p))}",
                     np.ascontiguousarray(np.transpose(data, _inverse(p))), v.quant)


def _transpose_node(ctx: _Ctx, x: str, p: Perm, origin, name: str) -> Node:
    return make_node(ctx.g, "Transpose", [x], name=name, origin=origin, quant=ctx.g.values[x].quant,
                     perm=tuple(p))


def _operand(ctx: _Ctx, name: str, p: Perm, reader: Node, pre: list[Node]) -> str | None:
    """The value to read instead of `name` once the reader works on untransposed data."""
    t = ctx.transposed(name)
    if t is not None and t[1] == p:
        return t[0]
    v = ctx.g.values[name]
    if v.is_const:
        return _permute_const(ctx, name, p)
    inv = _inverse(p)
    # Computed already (a duplicate that CSE merges), or a boundary transpose of an input.
    exists = any(n.op == "Transpose" and n.inputs[0] == name and _perm_of(ctx.g, n) == inv
                 for n in ctx.g.nodes)
    if (exists or (ctx.boundary_ok and name in ctx.g.inputs)) and len(v.shape) == len(p):
        node = _transpose_node(ctx, name, inv, reader.origin, f"{name}_to_{reader.name}")
        pre.append(node)
        return node.outputs[0]
    return None


def _plain_attrs(op: str) -> bool:
    return not (set(get_op(op).attributes) & _AXIS_ATTRS)


def _per_tensor(g: Graph, *names: str) -> bool:
    return all(g.values[n].quant is None or not g.values[n].quant.per_channel for n in names)


def _plan(ctx: _Ctx, node: Node, p: Perm) -> _Sink | None:
    """How `node` reads the untransposed tensor instead (None: it cares about the layout)."""
    g = ctx.g
    opdef = get_op(node.op)
    r = len(p)
    if len(node.outputs) != 1 or not _per_tensor(g, *[i for i in node.inputs if i], node.outputs[0]):
        return None
    pre: list[Node] = []
    attrs = dict(node.attrs)

    def operands() -> list[str] | None:
        new = []
        for name in node.inputs:
            o = _operand(ctx, name, p, node, pre)
            if o is None:
                return None
            new.append(o)
        return new

    if opdef.kind == OpKind.ELEMENTWISE and len(node.inputs) == 1 and _plain_attrs(node.op):
        ins = operands()
        return None if ins is None else _Sink(ins, attrs, p, pre)
    if opdef.kind == OpKind.BROADCAST and len(node.inputs) == 2 and _plain_attrs(node.op):
        if len(g.values[node.outputs[0]].shape) != r:
            return None
        ins = operands()
        return None if ins is None else _Sink(ins, attrs, p, pre)
    if node.op == "Concat":
        ins = operands()
        if ins is None:
            return None
        attrs["axis"] = p[int(attrs["axis"]) % r]
        return _Sink(ins, attrs, p, pre)
    first = ctx.transposed(node.inputs[0])
    if first is None or first[1] != p:
        return None  # the ops below are rewritten only for a transposed first input
    x = first[0]
    if node.op == "BatchNorm":
        if not all(g.values[i].is_const for i in node.inputs[1:]):
            return None
        attrs["axis"] = p[int(attrs["axis"]) % r]
        return _Sink([x] + node.inputs[1:], attrs, p, pre)
    if node.op == "Softmax" and len(node.inputs) == 1:
        attrs["axis"] = p[int(attrs["axis"]) % r]
        return _Sink([x], attrs, p, pre)
    if node.op == "Pad" and len(node.inputs) == 1:
        pads = [int(v) for v in attrs["pads"]]
        new = [0] * (2 * r)
        for i in range(r):
            new[p[i]], new[r + p[i]] = pads[i], pads[r + i]
        attrs["pads"] = tuple(new)
        return _Sink([x], attrs, p, pre)
    if node.op == "Reshape" and len(node.inputs) == 1:
        found = _reshape_through(g.values[x].shape, p, tuple(g.values[node.outputs[0]].shape))
        if found is None:
            return None
        attrs["shape"], out_perm = found
        return _Sink([x], attrs, out_perm, pre)
    if opdef.kind == OpKind.REDUCTION and {"axes", "keepdims"} <= set(attrs) and len(node.inputs) == 1:
        axes = sorted({int(a) % r for a in attrs["axes"]}) or list(range(r))
        attrs["axes"] = tuple(sorted(p[a] for a in axes)) if attrs["axes"] else ()
        if attrs["keepdims"]:
            return _Sink([x], attrs, p, pre)
        kept_y = [i for i in range(r) if i not in axes]
        kept_x = sorted(p[i] for i in kept_y)
        return _Sink([x], attrs, tuple(kept_x.index(p[i]) for i in kept_y), pre)
    return None


def _reshape_through(xs: tuple[int, ...], p: Perm, zs: tuple[int, ...]
                     ) -> tuple[tuple[int, ...], Perm] | None:
    """(s, q) with Reshape(Transpose(x, p), zs) == Transpose(Reshape(x, s), q), if they commute.

    They do when the reshape only merges or splits runs of axes of the transposed tensor
    (size-1 axes aside) whose axes are also adjacent, in the same order, in x: each run is
    then a contiguous block of x as well, reshaped in place, and the transpose moves blocks.
    """
    ys = [xs[a] for a in p]
    if 0 in ys or 0 in zs:
        return None
    y_nz = [i for i, d in enumerate(ys) if d != 1]
    z_nz = [i for i, d in enumerate(zs) if d != 1]
    x_nz = [a for a, d in enumerate(xs) if d != 1]
    groups: list[tuple[list[int], list[int]]] = []  # (axes of y, axes of z) of equal size
    i = j = 0
    while i < len(y_nz) and j < len(z_nz):
        gy, gz = [y_nz[i]], [z_nz[j]]
        py, pz = ys[y_nz[i]], zs[z_nz[j]]
        i, j = i + 1, j + 1
        while py != pz:
            if py < pz and i < len(y_nz):
                gy.append(y_nz[i])
                py *= ys[y_nz[i]]
                i += 1
            elif pz < py and j < len(z_nz):
                gz.append(z_nz[j])
                pz *= zs[z_nz[j]]
                j += 1
            else:
                return None
        groups.append((gy, gz))
    if i != len(y_nz) or j != len(z_nz):
        return None
    start = []  # each group's first position among x's axes of size > 1
    for gy, _ in groups:
        pos = [x_nz.index(p[a]) for a in gy]
        if pos != list(range(pos[0], pos[0] + len(pos))):
            return None  # the run is not one block of x: a real transpose is needed
        start.append(pos[0])
    x_order = sorted(range(len(groups)), key=lambda k: start[k])
    ones = [i for i, d in enumerate(zs) if d == 1]
    shape = [1] * len(ones) + [zs[a] for k in x_order for a in groups[k][1]]
    where = {a: len(ones) + n for n, a in enumerate(a for k in x_order for a in groups[k][1])}
    where.update({a: n for n, a in enumerate(ones)})
    return tuple(shape), tuple(where[i] for i in range(len(zs)))


def _rewrite(ctx: _Ctx, node: Node, plan: _Sink) -> None:
    """node(T(x)) -> T(node'(x)): node' keeps the node's name, T' writes the node's output."""
    g = ctx.g
    y = node.outputs[0]
    insert_before(g, node, *plan.pre)
    opdef = get_op(node.op)
    node.inputs, node.attrs = plan.inputs, plan.attrs
    (dtype, shape), = opdef.infer(node, [g.values[i] if i else None for i in node.inputs])
    inner = g.fresh_name(f"{y}{_suffix(_inverse(plan.out_perm))}")
    g.add_value(dataclasses.replace(g.values[y], name=inner, dtype=dtype, shape=tuple(shape)))
    node.outputs = [inner]
    if _is_identity(plan.out_perm):
        substitute(g, y, inner)  # cannot fail: `inner` is a new computed value
        return
    t = Node("Transpose", g.fresh_name(f"{node.name}_transpose"), [inner], [y], {"perm": tuple(plan.out_perm)},
             node.origin)
    insert_after(g, node, t)


def _compose(ctx: _Ctx, node: Node) -> bool:
    """Transpose(Transpose(x, p1), p2) -> Transpose(x, p1[p2]), or x when that is the identity."""
    t = ctx.transposed(node.inputs[0])
    if t is None:
        return False
    x, p1 = t
    p2 = _perm_of(ctx.g, node)
    q = tuple(p1[i] for i in p2)
    node.inputs = [x]
    node.attrs = {**node.attrs, "perm": q}
    if _is_identity(q) and substitute(ctx.g, node.outputs[0], x):
        ctx.g.nodes = [n for n in ctx.g.nodes if n is not node]
    return True


def _readers_all_sink(ctx: _Ctx, t_out: str, p: Perm) -> bool:
    """A transpose moves only when every reader lets it through (or is a transpose)."""
    if t_out in ctx.g.outputs:
        return False
    for reader in ctx.g.nodes:
        if t_out in reader.inputs and reader.op != "Transpose" and _dry_plan(ctx, reader, p) is None:
            return False
    return True


def _dry_plan(ctx: _Ctx, node: Node, p: Perm) -> _Sink | None:
    """_plan without side effects on the graph (constants it would add are discarded)."""
    saved = dict(ctx.g.values)
    try:
        return _plan(ctx, node, p)
    finally:
        ctx.g.values = saved


def _flatten_into_fc(ctx: _Ctx, node: Node) -> bool:
    """FullyConnected(Reshape([N, K])(Transpose(x, p)), W) with p[0] == 0 -> the same FC of
    Reshape(x) with W's columns permuted (the classic NCHW flatten before a dense layer)."""
    g = ctx.g
    if node.op != "FullyConnected" or not g.values[node.inputs[1]].is_const:
        return False
    r = ctx.prod.get(node.inputs[0])
    if r is None or r.op != "Reshape" or node.inputs[0] in g.outputs:
        return False
    if sum(r.outputs[0] in n.inputs for n in g.nodes) != 1:
        return False
    t = ctx.transposed(r.inputs[0])
    if t is None:
        return False
    x, p = t
    xs = g.values[x].shape
    k = int(np.prod(xs[1:], dtype=np.int64))
    if not p or p[0] != 0 or g.values[r.outputs[0]].shape != (xs[0], k):
        return False
    w = g.values[node.inputs[1]]
    if w.shape[1] != k or (w.quant is not None and w.quant.per_channel and w.quant.axis != 0):
        return False
    # Column j of the flattened transposed tensor holds element src[j] of the flattened x.
    src = np.transpose(np.arange(k).reshape(xs[1:]), [a - 1 for a in p[1:]]).reshape(-1)
    permuted = np.empty_like(w.data)
    permuted[:, src] = w.data
    flat = make_node(g, "Reshape", [x], name=r.name, origin=r.origin, quant=g.values[x].quant,
                     shape=(xs[0], k))
    insert_before(g, node, flat)
    node.inputs = [flat.outputs[0], add_const(g, f"{node.inputs[1]}_nhwc", permuted, w.quant)] + node.inputs[2:]
    return True


def _step(g: Graph) -> bool:
    """Apply the first rewrite that fits; False at the fixpoint."""
    ctx = _Ctx(g)
    for node in g.nodes:
        if node.op == "Transpose":
            if _compose(ctx, node):
                return True
            continue
        if _flatten_into_fc(ctx, node):
            return True
        for name in dict.fromkeys(i for i in node.inputs if i):
            t = ctx.transposed(name)
            if t is None:
                continue
            ctx.boundary_ok = t[0] not in g.inputs
            if not _readers_all_sink(ctx, name, t[1]):
                continue
            plan = _plan(ctx, node, t[1])
            if plan is not None:
                _rewrite(ctx, node, plan)
                return True
    return False


def _moves_no_data(shape: tuple[int, ...], perm: Perm) -> bool:
    big = [a for a in perm if shape[a] != 1]
    return big == sorted(big)


def _transposes_to_reshapes(g: Graph) -> None:
    """A transpose that only moves size-1 axes is a reshape (a view, not a copy loop)."""
    for k, node in enumerate(g.nodes):
        if node.op != "Transpose":
            continue
        shape = g.values[node.inputs[0]].shape
        if _moves_no_data(shape, _perm_of(g, node)):
            g.nodes[k] = Node("Reshape", node.name, list(node.inputs), list(node.outputs),
                              {"shape": g.values[node.outputs[0]].shape}, node.origin)


def _distinct_transposes(g: Graph) -> int:
    """Transposes that compute different things (duplicates are merged by CSE after this pass)."""
    return len({(n.inputs[0], _perm_of(g, n)) for n in g.nodes if n.op == "Transpose"})


def sink_transposes(g: Graph) -> Graph:
    original = g
    g = clone(g)
    budget = 50 * (len(g.nodes) + 10)  # each rewrite moves a transpose down: a safe bound
    while budget and _step(g):
        budget -= 1
        prune_dead_nodes(g)
    if _distinct_transposes(g) > _distinct_transposes(original):
        # The moves did not pay: boundary transposes added for graph inputs met no inverse
        # (e.g. a residual Add of an input whose transpose then reaches the output).
        g = clone(original)
    _transposes_to_reshapes(g)
    return eliminate_dead_code(g)
