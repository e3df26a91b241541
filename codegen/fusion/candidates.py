"""Candidate groups of the fusion planner, found from op kinds and the graph's shape.

- chains: paths through the elementwise / broadcast part of the graph, each intermediate read
  by the next op only, the running value keeping the chain's shape and dtype; their other
  operands are read with broadcasting. A component of such ops that is a simple path is a
  chain (the planner segments it by dynamic programming); one that branches is a DAG (the
  planner packs its candidate paths with a partitioning search).
- groups the optimisation passes already formed (a clamp folded into its producer, a Pad into
  a convolution, Quantize/Dequantize pairs into an int8 op, per-channel affine ops into
  weights), recognised from the source nodes a node stands for, reported with their cost.

Legality, checked here: no cycle (a group is convex: nothing leaves it and comes back), no
duplicated work (every intermediate is read inside the group only, so each op runs once;
recomputation is never introduced), one dtype and shape along the running value.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.ir.graph import Graph, Node
from codegen.ops.fused_elementwise import chain_input, step_fn
from codegen.ops.registry import OpKind, get_op

MAX_CHAIN = 8  # candidate paths longer than this are not enumerated (register file bound anyway)


@dataclass(frozen=True)
class ChainCandidate:
    nodes: tuple[str, ...]
    operands: tuple[str, ...]  # values read besides the running value, in step order


def fusable(node: Node, g: Graph) -> bool:
    """An elementwise / broadcast node with one output that the fused loop can run."""
    if get_op(node.op).kind not in (OpKind.ELEMENTWISE, OpKind.BROADCAST) or len(node.outputs) != 1:
        return False
    ins = [i for i in node.inputs if i]
    if not 1 <= len(ins) <= 2 or len(ins) != len(node.inputs):
        return False
    dtype = g.values[ins[0]].dtype
    if any(g.values[i].dtype != dtype for i in ins) or g.values[node.outputs[0]].dtype != dtype:
        return False
    return step_fn(node, dtype) is not None


def _next_in_chain(node: Node, g: Graph, consumers: dict[str, list[Node]], ok: set[str]) -> Node | None:
    """The node that can continue a chain after `node`: its output's only reader, fusable,
    of the same shape, reading the running value once."""
    out = node.outputs[0]
    users = consumers.get(out, [])
    if out in g.outputs or len(users) != 1 or users[0].name not in ok:
        return None
    nxt = users[0]
    if nxt.inputs.count(out) != 1 or g.values[nxt.outputs[0]].shape != g.values[out].shape:
        return None
    return nxt


def chain_candidates(g: Graph) -> list[list[ChainCandidate]]:
    """Candidate paths (two ops or more), grouped by connected component of fusable ops."""
    ok = {n.name for n in g.nodes if fusable(n, g)}
    consumers = g.consumers()
    by_name = {n.name: n for n in g.nodes}
    succ: dict[str, Node | None] = {n: _next_in_chain(by_name[n], g, consumers, ok) for n in ok}
    paths: list[ChainCandidate] = []
    for start in sorted(ok, key=lambda n: g.nodes.index(by_name[n])):
        first = by_name[start]
        if g.values[chain_input(first, g)].shape != g.values[first.outputs[0]].shape:
            continue  # the running value must start at the output's shape
        path = [first]
        while len(path) < MAX_CHAIN and succ[path[-1].name] is not None:
            path.append(succ[path[-1].name])
            operands = _operands(path, g)
            if operands is not None:
                paths.append(ChainCandidate(tuple(n.name for n in path), operands))
    return _components(paths)


def _operands(path: list[Node], g: Graph) -> tuple[str, ...] | None:
    """The other inputs of the path's binary steps; None when one is produced inside it."""
    inside = {o for n in path for o in n.outputs}
    ops = []
    running = chain_input(path[0], g)
    for n in path:
        if len(n.inputs) == 2:
            other = n.inputs[1] if n.inputs[0] == running else n.inputs[0]
            if other in inside:
                return None
            ops.append(other)
        running = n.outputs[0]
    return tuple(ops)


def _components(paths: list[ChainCandidate]) -> list[list[ChainCandidate]]:
    """Candidates grouped so that two overlapping ones are in the same group."""
    groups: list[tuple[set[str], list[ChainCandidate]]] = []
    for p in paths:
        hit = [grp for grp in groups if grp[0] & set(p.nodes)]
        names, members = set(p.nodes), [p]
        for grp in hit:
            names |= grp[0]
            members = grp[1] + members
            groups.remove(grp)
        groups.append((names, members))
    return [m for _, m in groups]


def is_simple_chain(component: list[ChainCandidate]) -> bool:
    """True when the component's candidates are the segments of one path (DP applies)."""
    longest = max(component, key=lambda c: len(c.nodes))
    return all(_is_segment(c.nodes, longest.nodes) for c in component)


def _is_segment(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    n = len(part)
    return any(whole[i:i + n] == part for i in range(len(whole) - n + 1))


def convex(g: Graph, names: set[str]) -> bool:
    """No path leaves the group and re-enters it (fusing would create a cycle)."""
    producers = g.producers()
    by_name = {n.name: n for n in g.nodes}
    outside_reach: set[str] = set()  # outside nodes reachable from the group
    for n in g.nodes:
        preds = [producers[i] for i in n.inputs if i in producers]
        from_group = any(p.name in names or p.name in outside_reach for p in preds)
        if n.name in names:
            if any(p.name in outside_reach for p in preds):
                return False
        elif from_group:
            outside_reach.add(n.name)
    return all(name in by_name for name in names)


# -- groups formed by the optimisation passes -------------------------------------------------

@dataclass(frozen=True)
class PassGroup:
    kind: str  # what was folded: "epilogue", "pad", "qdq", "affine", "layout" (joined by +)
    node: str  # the node of the optimised graph that stands for the group
    members: tuple[str, ...]  # the source nodes (of the imported graph) folded into it
    passes: str  # the passes that formed it


# What a folded source node was, by kind and dtype, and the pass that folds it.
_FOLDS = {"qdq": "fold_qdq", "pad": "fold_pad", "layout": "layout", "affine": "fold_batchnorm/fold_affine",
          "epilogue": "fuse_activation"}


def pass_groups(g: Graph, source: Graph) -> list[PassGroup]:
    """Nodes of `g` standing for several source nodes, with what was folded into them."""
    kept = {n.name for n in g.nodes}
    found = []
    for n in g.nodes:
        if len(n.origin) < 2:
            continue
        members = [s for s in source.nodes if s.origin and s.origin[0] in n.origin
                   and (s.name == n.name or s.name not in kept)]
        main = next((m for m in members if m.op == n.op), None)
        folded = [m for m in members if m is not main]
        kinds = sorted({_fold_kind(m, source) for m in folded})
        if not kinds:
            continue
        found.append(PassGroup("+".join(kinds), n.name, tuple(m.name for m in members),
                               ", ".join(_FOLDS[k] for k in kinds)))
    return found


def _fold_kind(m: Node, source: Graph) -> str:
    kind = get_op(m.op).kind
    ins = [source.values[i].dtype for i in m.inputs if i]
    if ins and any(source.values[o].dtype != ins[0] for o in m.outputs):
        return "qdq"
    if kind == OpKind.INJECTIVE:
        return "pad" if "pads" in m.attrs else "layout"
    if kind == OpKind.BROADCAST:
        return "affine"
    return "epilogue"
