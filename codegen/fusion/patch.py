"""Patch-based execution of a CNN's first stage (MCUNetV2), chosen when it lowers the arena peak.

The first layers of a CNN hold the largest activations, and layer by layer each one is stored
whole. Run instead as T row bands, the stage keeps only one band of each intermediate live:
band k slices the rows of the stage input it needs (its receptive field, see patch_geometry),
runs its own copy of every op of the stage on them (same weights, pads only where the band
touches the border) and writes its rows of the stage output. Interior bands overlap by the
halo of the receptive field, which is computed again: the recomputation, counted in MACs.

It is a graph transformation with the existing ops (Slice, the stage's ops, Concat along H),
so every output element is computed by the same kernel arithmetic as before: int8 stays
bit-exact by construction. After lowering, the Slice/Concat copies become views
(codegen/lower/band_views.py), so the bands read and write the stage's tensors in place.

Whether it pays is measured, not assumed: every candidate (stage length x number of bands)
is lowered for the target and placed by the arena planner (greedy, with the in-place reuse the
kernels allow: the caller's measure, codegen/memory/arena_measure.py), and the lowest arena wins within a budget of recomputed MACs (then the fewest
recomputed MACs); when no candidate lowers the arena, the proposal is declined (None).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from codegen.errors import KilnError
from codegen.fusion.patch_geometry import PATCH_PREFIX, RowWindow, activation_input, band_bounds, chain_rows, row_window
from codegen.ir.graph import Graph, Node
from codegen.ir.types import Value
from codegen.ir.verifier import verify_graph
from codegen.ops.registry import get_op

# The planned arena of a graph (codegen/memory/arena_measure.py): measured by the caller's
# function, so that fusion does not reach forward into lowering and memory planning.
ArenaMeasure = Callable[[Graph], int]

TILE_CHOICES = (2, 3, 4, 6, 8, 12)
# Recomputation allowed by default, as a share of the model's MACs: MCUNetV2 reports ~10 % for
# its patch stages before redistributing the receptive field. On VWW (host) a larger budget buys
# little: 25 % would take the arena from 19.0 to 16.9 kB for +16 % MACs instead of +2.7 %.
MAX_EXTRA_MAC_SHARE = 0.10


@dataclass(frozen=True)
class PatchCandidate:
    """One way to run a stage patch by patch, with its measured effect."""

    nodes: tuple[str, ...]  # the stage's node chain, first to last
    tiles: int  # row bands of the stage output
    peak_ram_before: int  # arena bytes, layer by layer
    peak_ram_after: int  # arena bytes, patched
    extra_macs: int  # MACs computed again in the overlapping halos
    reason: str
    stage_macs: int = 0  # MACs of the stage, layer by layer
    band_rows: tuple[tuple[int, int], ...] = ()  # output rows [lo, hi) of each band

    @property
    def saved_bytes(self) -> int:
        return self.peak_ram_before - self.peak_ram_after

    def manifest(self) -> dict:
        """The manifest's `patch_stage` entry (planned arenas: greedy placement, as searched)."""
        return {"nodes": list(self.nodes), "tiles": self.tiles, "band_rows": [list(b) for b in self.band_rows],
                "stage_macs": self.stage_macs, "extra_macs": self.extra_macs,
                "planned_arena_before": self.peak_ram_before, "planned_arena_after": self.peak_ram_after,
                "reason": self.reason}


def leading_chain(g: Graph) -> list[Node]:
    """The first run of row-mapping ops around the first sliding-window op (with the
    elementwise ops before it, e.g. the Quantize of a float input), each intermediate read
    only by the next op and not a graph output."""
    consumers, producers = g.consumers(), g.producers()
    chain: list[Node] = []
    for node in g.nodes:
        if row_window(node, g) is not None and "pads" in node.attrs:
            chain = [node]
            break
    while chain:
        prev = producers.get(activation_input(chain[0]))
        x = activation_input(chain[0])
        if prev is None or row_window(prev, g) is None or len(consumers[x]) != 1 or x in g.outputs:
            break
        chain.insert(0, prev)
    while chain:
        out = chain[-1].outputs[0]
        users = consumers.get(out, [])
        if out in g.outputs or len(users) != 1:
            break
        nxt = users[0]
        if row_window(nxt, g) is None or activation_input(nxt) != out or nxt.inputs.count(out) != 1:
            break
        chain.append(nxt)
    return chain


def graph_macs(nodes, g: Graph) -> int:
    """MACs one execution of `nodes` performs."""
    return sum(get_op(n.op).macs(n, g) for n in nodes)


def _band_node(node: Node, g: Graph, k: int, x: str, pad_top: int, pad_bottom: int, quant) -> Node:
    """Band k's copy of `node` reading `x`, with the band's H pads; its output value added to g."""
    attrs = dict(node.attrs)
    if "pads" in attrs:
        _top, left, _bottom, right = attrs["pads"]
        attrs["pads"] = (pad_top, left, pad_bottom, right)
    band = Node(node.op, g.fresh_name(f"{node.name}_band{k}"), [x] + node.inputs[1:], [], attrs, node.origin)
    (dtype, shape), = get_op(node.op).infer(band, [g.values[i] if i else None for i in band.inputs])
    out = g.add_value(Value(g.fresh_name(f"{node.outputs[0]}_band{k}"), dtype, tuple(shape), quant))
    band.outputs.append(out.name)
    return band


def _slice_node(g: Graph, k: int, x: str, lo: int, hi: int) -> tuple[Node, str]:
    v = g.values[x]
    n, h, w, c = v.shape
    node = Node("Slice", g.fresh_name(f"{PATCH_PREFIX}slice_band{k}"), [x], [],
                {"starts": (0, lo, 0, 0), "ends": (n, hi, w, c), "steps": (1, 1, 1, 1)}, ())
    out = g.add_value(Value(g.fresh_name(f"{x}_rows{lo}_{hi}"), v.dtype, (n, hi - lo, w, c), v.quant))
    node.outputs.append(out.name)
    return node, out.name


def _checked_stage(graph: Graph, candidate: PatchCandidate) -> tuple[list[Node], list[RowWindow]]:
    """The candidate's nodes and row windows, after checking they form a chain a patch can run."""
    by_name = {n.name: n for n in graph.nodes}
    missing = [name for name in candidate.nodes if name not in by_name]
    if missing or not candidate.nodes:
        raise KilnError(f"patch stage names no node or unknown nodes {missing}")
    stage = [by_name[name] for name in candidate.nodes]
    windows = [row_window(n, graph) for n in stage]
    consumers = graph.consumers()
    for k, (node, w) in enumerate(zip(stage, windows)):
        if w is None:
            raise KilnError("patch stage: not a row-mapping op (convolution, pooling, elementwise)", node=node.name)
        if k and (activation_input(node) != stage[k - 1].outputs[0]
                  or len(consumers[stage[k - 1].outputs[0]]) != 1 or stage[k - 1].outputs[0] in graph.outputs):
            raise KilnError("patch stage: does not read the previous stage op's output alone", node=node.name)
    if not 1 <= candidate.tiles <= windows[-1].out_size:
        raise KilnError(f"patch stage: {candidate.tiles} bands of {windows[-1].out_size} output rows",
                        node=stage[-1].name)
    return stage, windows


def apply_patch_stage(graph: Graph, candidate: PatchCandidate) -> Graph:
    """`graph` with the candidate's stage run as `candidate.tiles` row bands.

    Needs: the stage nodes form a chain of row-mapping ops (as `leading_chain` finds).
    Keeps: every graph input and output and every value outside the stage (the stage output
    keeps its name, now written by the bands' Concat), hence the graph's results.
    """
    stage, windows = _checked_stage(graph, candidate)
    g = Graph(graph.name, dict(graph.values), [], list(graph.inputs), list(graph.outputs))
    for n in stage[:-1]:
        del g.values[n.outputs[0]]  # the stage's whole intermediates no longer exist
    x0, out = activation_input(stage[0]), stage[-1].outputs[0]
    bands: list[Node] = []
    band_outs = []
    for k, (lo, hi) in enumerate(band_bounds(g.values[out].shape[1], candidate.tiles)):
        spans = chain_rows(windows, lo, hi)
        x = x0
        if (spans[0].lo, spans[0].hi) != (0, windows[0].in_size):
            node, x = _slice_node(g, k, x0, spans[0].lo, spans[0].hi)
            bands.append(node)
        for node, span in zip(stage, spans):
            band = _band_node(node, g, k, x, span.pad_top, span.pad_bottom, graph.values[node.outputs[0]].quant)
            bands.append(band)
            x = band.outputs[0]
        band_outs.append(x)
    bands.append(Node("Concat", g.fresh_name(f"{PATCH_PREFIX}concat_{stage[-1].name}"), band_outs, [out],
                      {"axis": 1}, ()))
    staged = set(candidate.nodes)
    for node in graph.nodes:
        if node.name == stage[-1].name:
            g.nodes.extend(bands)
        elif node.name not in staged:
            g.nodes.append(node)
    verify_graph(g)
    return g


def patch_candidates(graph: Graph, arena: ArenaMeasure, tiles: tuple[int, ...] = TILE_CHOICES,
                     max_extra_macs: int | None = None) -> list[PatchCandidate]:
    """Every stage (a prefix of the leading chain, two ops or more) split into every band count
    that fits its output height, each measured: planned arena and recomputed MACs. Candidates
    recomputing more than `max_extra_macs` (default: MAX_EXTRA_MAC_SHARE of the model's MACs)
    are not planned (planning is the expensive part); longer stages recompute more, so the
    search stops at the first stage length over budget in every band count."""
    chain = leading_chain(graph)
    if max_extra_macs is None:
        max_extra_macs = int(MAX_EXTRA_MAC_SHARE * graph_macs(graph.nodes, graph))
    before = arena(graph) if len(chain) >= 2 else 0
    known = {n.name for n in graph.nodes}
    found = []
    for end in range(2, len(chain) + 1):
        stage = chain[:end]
        out_rows = graph.values[stage[-1].outputs[0]].shape[1]
        stage_macs = graph_macs(stage, graph)
        within = False
        for t in tiles:
            if t > out_rows:
                continue
            probe = PatchCandidate(tuple(n.name for n in stage), t, before, before, 0, "")
            patched = apply_patch_stage(graph, probe)
            extra = graph_macs([n for n in patched.nodes if n.name not in known], patched) - stage_macs
            if extra > max_extra_macs:
                continue
            within = True
            after = arena(patched)
            found.append(replace(probe, peak_ram_after=after, extra_macs=extra, stage_macs=stage_macs,
                                 band_rows=tuple(band_bounds(out_rows, t)),
                                 reason=f"{len(stage)} ops in {t} bands: arena {before} -> {after} B, "
                                        f"+{extra} MACs ({extra / max(stage_macs, 1):.1%} of the stage)"))
        if not within:
            break
    return found


def choose_patch(candidates: list[PatchCandidate]) -> PatchCandidate | None:
    """The candidate with the least arena (then fewest extra MACs, then fewest bands) among those
    that lower the arena; None when none does."""
    fit = [c for c in candidates if c.peak_ram_after < c.peak_ram_before]
    if not fit:
        return None
    best = min(fit, key=lambda c: (c.peak_ram_after, c.extra_macs, c.tiles, len(c.nodes)))
    return replace(best, reason=f"patched: {best.reason}; best of {len(candidates)} candidates measured "
                                f"({len(fit)} lower the arena)")


def propose_patch_stage(graph: Graph, arena: ArenaMeasure, *, max_extra_macs: int | None = None,
                        tiles: tuple[int, ...] = TILE_CHOICES) -> PatchCandidate | None:
    """The patch-based first stage that lowers the planned arena most within the recomputation
    budget (`max_extra_macs`, default MAX_EXTRA_MAC_SHARE of the model's MACs), or None."""
    return choose_patch(patch_candidates(graph, arena, tiles, max_extra_macs=max_extra_macs))


def patch_first_stage(graph: Graph, arena: ArenaMeasure, tiles: int | None = None
                      ) -> tuple[Graph, PatchCandidate | None]:
    """`graph` with its first stage patched when that lowers the arena (in `tiles` bands, or
    the best band count), and the candidate taken; (graph, None) otherwise."""
    best = propose_patch_stage(graph, arena, tiles=(tiles,) if tiles else TILE_CHOICES)
    return (graph, None) if best is None else (apply_patch_stage(graph, best), best)
