"""The fusion planner: Graph, Target, objective -> the groups that become one kernel each.

Every candidate is priced twice by the cost model (unfused: one kernel per node; fused: the
group's kernel) and kept only when the objective improves:
  speed  estimated cycles
  size   flash: weights plus an estimate of the code (one params struct per call, one new
         function per generated kernel)
  ram    arena bytes the group's intermediates take (patch-based execution of the first
         stage included, when codegen/fusion/patch.py offers one), then cycles
Search: a chain of candidates (the segments of one path) is segmented exactly by dynamic
programming; a branching component (candidate paths that overlap in a DAG) by a partitioning
search — CP-SAT set packing with a time limit, greedy by gain when it stops early or is
unavailable. Horizontal sibling sets are independent of each other and decided one by one.
Groups the optimisation passes formed are reported with their cost, as decided by them.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from codegen.fusion.candidates import (ChainCandidate, chain_candidates, convex, is_simple_chain,
                                       pass_groups)
from codegen.fusion.chain import fused_node
from codegen.fusion.costmodel import Estimate, Work, estimate, live_registers
from codegen.fusion.horizontal import SiblingSet, merge_siblings, sibling_sets
from codegen.fusion.residual import apply_residual, fused_variant, fused_work, residual_candidates, unfused_works
from codegen.fusion.target_cost import CostParams, cost_params
from codegen.fusion.work import chain_work, node_work
from codegen.errors import KilnError
from codegen.ir.graph import Graph
from codegen.passes.graph_edit import clone

OBJECTIVES = ("speed", "size", "ram")
MODES = ("auto", "off", "all")
# Code-size estimate in bytes: the const params struct of one call, and a generated function.
_PARAMS_BYTES = 24
_FUNCTION_BYTES = 160
_STEP_CODE_BYTES = 24


@dataclass(frozen=True)
class Decision:
    kind: str  # "chain", "horizontal", "residual", "patch", or what a pass folded ("epilogue", "pad", ...)
    nodes: tuple[str, ...]
    fused: bool
    unfused_cost: Estimate
    fused_cost: Estimate
    reason: str
    by: str = "planner"  # "planner", or the passes that formed the group
    unfused_code: int = 0  # code-size estimate, bytes
    fused_code: int = 0
    arena_before: int | None = None  # patch: planned arena (bytes) without / with it
    arena_after: int | None = None


@dataclass
class FusionPlan:
    objective: str
    target: str
    graph: Graph  # with the fused groups applied
    decisions: list[Decision] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)  # how each component was searched

    def manifest(self) -> dict:
        """The plan as the manifest lists it (no timings: builds stay byte-identical)."""
        return {"objective": self.objective,
                "groups": [{"kind": d.kind, "nodes": list(d.nodes), "fused": d.fused, "by": d.by,
                            "reason": d.reason,
                            "estimate_unfused": _est_dict(d.unfused_cost, d.unfused_code),
                            "estimate_fused": _est_dict(d.fused_cost, d.fused_code)}
                           for d in self.decisions]}


def _est_dict(e: Estimate, code: int) -> dict:
    return {"calls": e.calls, "instructions": e.instructions, "cycles": e.cycles,
            "arena_bytes": e.arena_bytes, "flash_bytes": e.flash_bytes + code}


def score(objective: str, est: Estimate, code: int) -> float:
    """What the objective minimises (lower is better)."""
    if objective == "size":
        return est.flash_bytes + code + est.cycles * 1e-9
    if objective == "ram":
        return est.arena_bytes + est.cycles * 1e-9
    return float(est.cycles)


def plan_fusion(g: Graph, target, objective: str = "speed", *, source: Graph | None = None,
                ram_limit: int | None = None, time_limit_s: float = 2.0,
                mode: str = "auto", patch: bool = True, arena: Callable[[Graph], int] | None = None) -> FusionPlan:
    """Decide and apply the fusion groups of `g` (the optimised graph) for `target`.

    `source`: the imported graph, to report the groups the passes formed. `mode`: "auto" (the
    cost model decides), "off" (candidates priced and reported, none fused) or "all" (every
    legal candidate fused whatever the cost model says: benchmarks measure declined fusions so).
    `patch`: propose patch-based execution of the first stage (objective ram, or an arena above
    `ram_limit`); off when the build patches it anyway (--patch-stage). `arena`: the planned
    arena of a graph (codegen/memory/arena_measure.py, given by the compiler), by which the
    patch-based candidates are measured; without it none is proposed.
    """
    if objective not in OBJECTIVES:
        raise KilnError(f"unknown fusion objective '{objective}' (one of {', '.join(OBJECTIVES)})")
    if mode not in MODES:
        raise KilnError(f"unknown fusion mode '{mode}' (one of {', '.join(MODES)})")
    params = cost_params(target)
    plan = FusionPlan(objective, target.name, g)
    if source is not None:
        plan.decisions += _pass_decisions(g, source, params)
    plan.graph = _horizontal(plan, params, mode)
    plan.graph = _residual(plan, params, mode, fused_variant(target.variants))
    plan.graph = _chains(plan, params, mode, time_limit_s)
    if patch and (objective == "ram" or ram_limit is not None):
        plan.graph = _patch(plan, arena, params, ram_limit)
    return plan


# -- passes' groups ----------------------------------------------------------------------------

def _pass_decisions(g: Graph, source: Graph, params: CostParams) -> list[Decision]:
    src = {n.name: n for n in source.nodes}
    by_name = {n.name: n for n in g.nodes}
    out = []
    for pg in pass_groups(g, source):
        members = [src[m] for m in pg.members]
        inner = frozenset(o for m in members[:-1] for o in m.outputs)
        unfused = estimate([node_work(m, source, inner) for m in members], params)
        fused = estimate([node_work(by_name[pg.node], g)], params)
        out.append(Decision(pg.kind, pg.members, True, unfused, fused,
                            f"folded into {pg.node} by the optimisation passes", by=pg.passes,
                            unfused_code=_PARAMS_BYTES * len(members), fused_code=_PARAMS_BYTES))
    return out


# -- horizontal fusion -------------------------------------------------------------------------

def _horizontal(plan: FusionPlan, params: CostParams, mode: str):
    g = plan.graph
    for sibs in sibling_sets(g):
        by_name = {n.name: n for n in g.nodes}
        nodes = [by_name[n] for n in sibs.nodes]
        cat = by_name[sibs.concat]
        inner = frozenset(n.outputs[0] for n in nodes)
        unfused_works = [node_work(n, g, inner) for n in nodes] + [node_work(cat, g)]
        unfused = estimate(unfused_works, params)
        fused_work = _merged_work(unfused_works[:-1], sibs)
        fused = estimate([fused_work], params)
        parts = len(nodes)  # the Concat copies each input in a call of its own
        u_code, f_code = _PARAMS_BYTES * (len(nodes) + parts), _PARAMS_BYTES
        wins = score(plan.objective, fused, f_code) < score(plan.objective, unfused, u_code)
        take = mode == "all" or (wins and mode == "auto")
        reason = _horizontal_reason(sibs, unfused, fused, wins, plan.objective)
        plan.decisions.append(Decision("horizontal", sibs.nodes + (sibs.concat,), take, unfused, fused,
                                       reason + _mode_note(mode, wins, take),
                                       unfused_code=u_code, fused_code=f_code))
        if take:
            g = merge_siblings(g, sibs)
    return g


def _merged_work(works: list[Work], sibs: SiblingSet) -> Work:
    first = works[0]
    pad = 1 + sibs.padded_macs / max(1, sum(w.macs for w in works))
    return Work(kind=first.kind, dtype=first.dtype, macs=sum(w.macs for w in works) + sibs.padded_macs,
                taps=sum(w.out_elements for w in works) * sibs.kernel[0] * sibs.kernel[1],
                out_elements=sum(w.out_elements for w in works), in_elements=first.in_elements,
                itemsize=first.itemsize, weight_bytes=round(sum(w.weight_bytes for w in works) * pad))


def _horizontal_reason(sibs: SiblingSet, unfused: Estimate, fused: Estimate, wins: bool, objective: str) -> str:
    if sibs.padded_macs and not wins:
        return (f"declined: padding the smaller kernels to {sibs.kernel[0]}x{sibs.kernel[1]} adds "
                f"{sibs.padded_macs:,} MACs of zero taps, more than the Concat copies and calls it saves")
    if wins:
        return (f"one kernel writes the Concat's output: {unfused.calls - fused.calls} calls and the "
                f"channel copies saved, the input read once")
    return f"declined: no gain for {objective}"


# -- residual Add in a convolution's epilogue ----------------------------------------------------

def _residual(plan: FusionPlan, params: CostParams, mode: str, variant: str | None) -> Graph:
    """Each Add with the better of its candidate convolutions, when that one gains."""
    g = plan.graph
    if variant is None:
        return g
    by_add: dict[str, list] = {}
    for cand in residual_candidates(g, variant):
        by_add.setdefault(cand.add, []).append(cand)
    for add_name, cands in by_add.items():
        by_name = {n.name: n for n in g.nodes}
        priced = []
        for cand in cands:
            conv, add = by_name[cand.conv], by_name[add_name]
            unfused = estimate(unfused_works(conv, add, g), params)
            fused = estimate([fused_work(conv, add, g)], params)
            u_code, f_code = 2 * _PARAMS_BYTES, _PARAMS_BYTES + _FUNCTION_BYTES
            priced.append((score(plan.objective, unfused, u_code) - score(plan.objective, fused, f_code),
                           cand, unfused, fused, u_code, f_code))
        gain, cand, unfused, fused, u_code, f_code = max(priced, key=lambda p: p[0])
        wins = gain > 0
        take = mode == "all" or (wins and mode == "auto")
        reason = (f"the Add runs in the convolution's epilogue ({variant} kernel): {unfused.calls - fused.calls} call and "
                  f"{unfused.arena_bytes:,} B of intermediate saved, the residual read as the outputs are made"
                  if wins else f"declined: the fused kernel is not cheaper for {plan.objective} (gain {gain:,.0f})")
        plan.decisions.append(Decision("residual", (cand.conv, add_name), take, unfused, fused,
                                       reason + _mode_note(mode, wins, take), unfused_code=u_code, fused_code=f_code))
        if take:
            g = apply_residual(g, cand)
    return g


# -- chains ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Priced:
    cand: ChainCandidate
    unfused: Estimate
    fused: Estimate
    u_code: int
    f_code: int
    gain: float
    work: Work  # the fused kernel's


def _price(g: Graph, cand: ChainCandidate, params: CostParams, objective: str) -> _Priced:
    by_name = {n.name: n for n in g.nodes}
    nodes = [by_name[n] for n in cand.nodes]
    inner = frozenset(n.outputs[0] for n in nodes[:-1])
    unfused = estimate([node_work(n, g, inner) for n in nodes], params)
    work = chain_work(nodes, g, list(cand.operands))
    fused = estimate([work], params)
    u_code = _PARAMS_BYTES * len(nodes)
    f_code = _PARAMS_BYTES + _FUNCTION_BYTES + _STEP_CODE_BYTES * len(nodes)
    gain = score(objective, unfused, u_code) - score(objective, fused, f_code)
    return _Priced(cand, unfused, fused, u_code, f_code, gain, work)


def _mode_note(mode: str, wins: bool, take: bool) -> str:
    if take and not wins:
        return " (fused anyway: fusion mode 'all')"
    if wins and not take:
        return " (not fused: fusion mode 'off')"
    return ""


def _chains(plan: FusionPlan, params: CostParams, mode: str, time_limit_s: float) -> Graph:
    g = plan.graph
    chosen: list[_Priced] = []
    for component in chain_candidates(g):
        priced = [_price(g, c, params, plan.objective) for c in component if convex(g, set(c.nodes))]
        if not priced:
            continue
        if mode == "all":  # the fewest, longest groups, whatever they gain (squared: one long beats two short)
            priced = [replace(p, gain=max(p.gain, 0) + 1e12 * len(p.cand.nodes) ** 2) for p in priced]
        if is_simple_chain(component):
            pick, how = _segment_dp(priced), f"DP over a chain of {max(len(p.cand.nodes) for p in priced)} ops"
        else:
            pick, how = _pack(priced, time_limit_s)
        plan.searches.append(how)
        if mode == "off":
            pick = []
        chosen += pick
        taken = {p.cand for p in pick}
        best_declined = _declined(priced, taken)
        for p in pick:
            plan.decisions.append(Decision("chain", p.cand.nodes, True, p.unfused, p.fused, _chain_reason(p, params),
                                           unfused_code=p.u_code, fused_code=p.f_code))
        for p in best_declined:
            plan.decisions.append(Decision("chain", p.cand.nodes, False, p.unfused, p.fused,
                                           _decline_reason(p, params, plan.objective),
                                           unfused_code=p.u_code, fused_code=p.f_code))
    for p in chosen:
        g = _apply_chain(g, p.cand)
    return g


def _declined(priced: list[_Priced], taken: set) -> list[_Priced]:
    """The declined candidate worth explaining: the component's longest path, unless taken."""
    longest = max(priced, key=lambda p: (len(p.cand.nodes), p.cand.nodes))
    return [] if longest.cand in taken else [longest]


def _segment_dp(priced: list[_Priced]) -> list[_Priced]:
    """Exact best segmentation of one path: best[i] = max over j of best[j] + gain(j..i)."""
    path = max(priced, key=lambda p: len(p.cand.nodes)).cand.nodes
    seg = {p.cand.nodes: p for p in priced}
    best: list[tuple[float, list[_Priced]]] = [(0.0, [])]
    for i in range(1, len(path) + 1):
        options = [best[i - 1]]  # node i-1 alone
        for j in range(i - 1):
            p = seg.get(path[j:i])
            if p is not None and p.gain > 0:
                options.append((best[j][0] + p.gain, best[j][1] + [p]))
        best.append(max(options, key=lambda o: o[0]))
    return best[-1][1]


def _pack(priced: list[_Priced], time_limit_s: float) -> tuple[list[_Priced], str]:
    """Non-overlapping candidates of a branching component with the largest total gain."""
    useful = [p for p in priced if p.gain > 0]
    if not useful:
        return [], "partition search: no candidate gains"
    try:
        from ortools.sat.python import cp_model
    except ImportError:  # pragma: no cover - ortools is a dependency; greedy keeps Kiln working
        return _greedy(useful), "greedy partition (CP-SAT unavailable)"
    m = cp_model.CpModel()
    x = [m.NewBoolVar(f"c{k}") for k in range(len(useful))]
    for name in {n for p in useful for n in p.cand.nodes}:
        m.AddAtMostOne(v for v, p in zip(x, useful) if name in p.cand.nodes)
    m.Maximize(sum(int(round(p.gain)) * v for v, p in zip(x, useful)))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = 1  # deterministic
    start = time.perf_counter()
    status = solver.Solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _greedy(useful), "greedy partition (CP-SAT found nothing in the time limit)"
    pick = [p for v, p in zip(x, useful) if solver.Value(v)]
    greedy = _greedy(useful)
    if sum(p.gain for p in greedy) > sum(p.gain for p in pick):
        pick = greedy
    kind = "optimal" if status == cp_model.OPTIMAL else "time limit"
    return pick, (f"CP-SAT partition of a DAG of {len({n for p in useful for n in p.cand.nodes})} ops, "
                  f"{len(useful)} candidates ({kind}, {time.perf_counter() - start:.2f} s)")


def _greedy(priced: list[_Priced]) -> list[_Priced]:
    used: set[str] = set()
    out = []
    for p in sorted(priced, key=lambda p: (-p.gain, p.cand.nodes)):
        if p.gain > 0 and not used & set(p.cand.nodes):
            out.append(p)
            used |= set(p.cand.nodes)
    return out


def _chain_reason(p: _Priced, params: CostParams) -> str:
    return (f"one pass keeps the running value in registers ({live_registers(p.work)} live of "
            f"{params.registers}); {p.unfused.calls - 1} calls and {p.unfused.arena_bytes:,} B of "
            "intermediates saved")


def _decline_reason(p: _Priced, params: CostParams, objective: str) -> str:
    if p.fused.spills:
        return (f"declined: the fused loop needs {p.fused.spills} registers more than the "
                f"{params.registers} the target has (spills per element)")
    if p.gain > 0:
        return (f"declined as a whole: the chosen groups overlapping it gain more for {objective} "
                f"(this one {p.gain:,.0f})")
    return f"declined: the fused kernel is not cheaper for {objective} (gain {p.gain:,.0f})"


def _apply_chain(g: Graph, cand: ChainCandidate) -> Graph:
    g = clone(g)
    by_name = {n.name: n for n in g.nodes}
    nodes = [by_name[n] for n in cand.nodes]
    node = fused_node(g, nodes, g.fresh_name("fused_" + nodes[0].name))
    at = g.nodes.index(nodes[-1])
    g.nodes[at] = node
    gone = {id(n) for n in nodes[:-1]}
    g.nodes = [n for n in g.nodes if id(n) not in gone]
    for n in nodes[:-1]:
        del g.values[n.outputs[0]]
    return g


# -- memory-driven fusion (patch-based first stage) ---------------------------------------------

def _banded(works: list[Work], tiles: int, extra_macs: int) -> list[Work]:
    """The stage run as `tiles` bands: one call per node and band, each a band's share of the
    work, the recomputed halo's MACs spread over the nodes by their MACs. The weights count
    once (the bands share them in flash)."""
    total = max(1, sum(w.macs for w in works))
    return [replace(w, macs=(w.macs + extra_macs * w.macs // total) // tiles, taps=w.taps // tiles,
                    out_elements=w.out_elements // tiles,
                    in_elements=w.in_elements // tiles, arena_bytes=w.arena_bytes // tiles,
                    weight_bytes=w.weight_bytes if band == 0 else 0)
            for w in works for band in range(max(1, tiles))]


def _patch(plan: FusionPlan, arena: Callable[[Graph], int] | None, params: CostParams,
           ram_limit: int | None) -> Graph:
    g = plan.graph
    if importlib.util.find_spec("codegen.fusion.patch") is None:
        plan.searches.append("patch-based execution: not available in this build")
        return g
    if arena is None:
        plan.searches.append("patch-based execution: no arena measure given")
        return g
    from codegen.fusion import patch

    if plan.objective != "ram" and arena(g) <= ram_limit:  # cheaper than proposing
        plan.searches.append("patch-based execution: not needed, the arena fits --ram-limit")
        return g
    cand = patch.propose_patch_stage(g, arena)
    if cand is None:
        plan.searches.append("patch-based execution: no stage lowers the arena")
        return g
    before, after = cand.peak_ram_before, cand.peak_ram_after
    need = plan.objective == "ram" or (ram_limit is not None and before > ram_limit)
    take = after < before and need
    by_name = {n.name: n for n in g.nodes}
    works = [node_work(by_name[n], g) for n in cand.nodes if n in by_name]
    unfused = estimate(works, params)
    fused = estimate(_banded(works, int(cand.tiles), int(cand.extra_macs)), params)
    reason = (f"{cand.tiles} patches: planned arena {before:,} -> {after:,} B for {cand.extra_macs:,} "
              f"recomputed MACs" + ("" if take else " (declined: the arena is within --ram-limit)"))
    plan.decisions.append(Decision("patch", tuple(cand.nodes), take, unfused, fused, reason,
                                   arena_before=before, arena_after=after))
    return patch.apply_patch_stage(g, cand) if take else g
