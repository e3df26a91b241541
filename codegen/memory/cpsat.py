"""Proven-optimal placement: the arena as a 2-D packing (time x address) solved by OR-Tools CP-SAT.

Each buffer is a rectangle whose time side is fixed (its lifetime) and whose address side
slides: offset = align * k. One NoOverlap2D keeps live buffers apart, every rectangle ends
below the arena size, and the arena size is minimised. The greedy plan is given as a hint, so
the solver starts from it and can only improve on it; the live-bytes lower bound is given as
the objective's floor, so a plan that reaches it is proven at once.

In-place reuse (declared `Alias`es): each usable pair gets a Boolean. Time runs in half
steps: a buffer live over steps [first, last] covers [2 first, 2 last + 2). When the Boolean
is true, the output's offset equals the input's (or, for a partial overlap, lies at least
the declared shift below it), the input's rectangle ends half a step early
and the output's starts half a step late, so the two no longer meet in the NoOverlap2D while
both still meet everything else live at that step; the depthwise temp is an optional
rectangle present only then. A step is one kernel call, so at most one Boolean per step is
true: the half-step exemption is then exactly the pair's. The floor becomes the aliasing-aware
bound; among equal arenas the fewest aliases are taken.

Determinism: the build output must be byte-identical across runs, so the search must not
depend on thread timing. Measured on random instances (2-core machine, 18 instances, 4 s
each): two parallel workers found different offsets from run to run; CP-SAT's deterministic
interleaved search (2 or 8 workers) was deterministic but much weaker (sum of gaps to the
bound 916 B against 5 B); one worker was deterministic, proved 16 of 18 optimal and was the
fastest. So: one worker, a fixed seed, and a stop on *deterministic* time (a count of work,
not seconds). The wall-clock limit is only a safety net: if a loaded machine reaches it first,
the plan is still valid and no worse than greedy's, but may differ from run to run.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from codegen import progress
from codegen.memory.buffers import Alias, Buffer, Plan, alias_bound, lower_bound, usable_aliases

SEED = 20240601
WORKERS = 1  # see the module docstring: more workers are either non-deterministic or weaker
# One unit of deterministic time took 1.2 to 2.6 s of wall time here: stop the search on this
# share of the user's limit, so that the wall-clock net (the full limit) is rarely what stops it.
DETERMINISTIC_SHARE = 0.35


# Wall time kept back for reading the solution and validating it.
MARGIN_S = 0.05


def _params(solver: cp_model.CpSolver, time_limit: float, wall_left: float) -> None:
    p = solver.parameters
    p.random_seed = SEED
    p.num_workers = WORKERS
    p.interleave_search = False
    p.max_deterministic_time = max(time_limit * DETERMINISTIC_SHARE, 0.01)
    p.max_time_in_seconds = max(wall_left - MARGIN_S, 0.01)
    p.log_search_progress = False


def solve_cpsat(buffers: list[Buffer], start: Plan, time_limit: float = 10.0,
                started: float | None = None, aliases: list[Alias] = ()) -> Plan:
    """Minimise the arena, starting from `start` (a valid plan, used as hint and upper bound).

    Returns a plan with status OPTIMAL when the solver proves no smaller arena exists (or the
    start already sits on the lower bound, then the solver is not run), FEASIBLE otherwise.
    `proven_bound` is the best lower bound known: the solver's, if it is above the live bound.
    The wall-clock limit counts from `started` (a `time.perf_counter()` value; default: now),
    so that a caller's own work (greedy, validation) is inside the limit too.
    """
    t0 = time.perf_counter() if started is None else started
    bound = lower_bound(buffers)
    usable = usable_aliases(buffers, list(aliases))
    floor = alias_bound(buffers, usable) if aliases else bound
    extra = {"aliases": start.aliases, "alias_bound": floor if aliases else None}
    if start.arena_size <= floor:
        return Plan(dict(start.offsets), start.arena_size, bound, "cpsat", "OPTIMAL", floor,
                    time.perf_counter() - t0, **extra)
    ub = start.arena_size
    model = cp_model.CpModel()
    arena = model.new_int_var(floor, ub, "arena")
    times, addrs, offsets = [], [], {}
    hinted = set(start.aliases)
    taken = {a.pair: model.new_bool_var(f"alias{j}") for j, a in enumerate(usable)}
    for j, a in enumerate(usable):
        model.add_hint(taken[a.pair], a.pair in hinted)
    step_of = {b.name: b.first for b in buffers}
    by_step: dict[int, list] = {}
    for a in usable:  # one reuse per step (one kernel call): the half steps below rely on it
        by_step.setdefault(step_of[a.out], []).append(taken[a.pair])
    for lits in by_step.values():
        if len(lits) > 1:
            model.add_at_most_one(lits)

    def place(key: str, b: Buffer, hint: int | None, present=None):
        k = model.new_int_var(0, (ub - b.size) // b.align, f"k{key}")
        off = model.new_int_var(0, ub - b.size, f"o{key}")
        model.add(off == b.align * k)
        fits = model.add(off + b.size <= arena)
        if present is not None:
            fits.only_enforce_if(present)
        if hint is not None:
            model.add_hint(k, hint // b.align)
            model.add_hint(off, hint)
        return off

    for i, b in enumerate(buffers):
        if b.size == 0:
            continue
        off = place(str(i), b, start.offsets[b.name])
        offsets[b.name] = off
        born = [taken[a.pair] for a in usable if a.out == b.name]  # starts half a step late
        dies = [taken[a.pair] for a in usable if a.inp == b.name]  # ends half a step early
        if born or dies:
            s0 = model.new_int_var(2 * b.first, 2 * b.first + 1, f"s{i}")
            e0 = model.new_int_var(2 * b.last + 1, 2 * b.last + 2, f"e{i}")
            model.add(s0 == 2 * b.first + sum(born))
            model.add(e0 == 2 * b.last + 2 - sum(dies))
            span = 2 * (b.last - b.first + 1)
            d0 = model.new_int_var(span - 2, span, f"d{i}")
            model.add(d0 == e0 - s0)
            times.append(model.new_interval_var(s0, d0, e0, f"t{i}"))
        else:
            times.append(model.new_fixed_size_interval_var(2 * b.first, 2 * (b.last - b.first + 1), f"t{i}"))
        addrs.append(model.new_fixed_size_interval_var(off, b.size, f"a{i}"))
    for j, a in enumerate(usable):
        lit = taken[a.pair]
        if a.exact:
            model.add(offsets[a.inp] - offsets[a.out] == a.shift).only_enforce_if(lit)
        else:
            model.add(offsets[a.inp] - offsets[a.out] >= a.shift).only_enforce_if(lit)
        if a.temp is not None and a.temp.size:
            t = a.temp
            off = place(f"tmp{j}", t, start.offsets.get(t.name) if a.pair in hinted else None, lit)
            offsets[t.name] = off
            times.append(model.new_fixed_size_interval_var(2 * t.first, 2 * (t.last - t.first + 1), f"tt{j}"))
            addrs.append(model.new_optional_fixed_size_interval_var(off, t.size, lit, f"ta{j}"))
    model.add_no_overlap_2d(times, addrs)
    model.add_hint(arena, ub)
    # Least arena first; among equal arenas, the fewest in-place reuses (an in-place depthwise
    # kernel copies each channel once more, so it is only worth taking when it saves bytes).
    scale = len(usable) + 1
    model.minimize(arena * scale + sum(taken.values()))

    solver = cp_model.CpSolver()
    _params(solver, time_limit, time_limit - (time.perf_counter() - t0))
    with progress.step(f"placing the arena (CP-SAT, at most {time_limit:g} s)"):
        status = solver.solve(model, _progress_reporter(solver, scale, floor, ub))
    seconds = time.perf_counter() - t0
    on_budget = solver.deterministic_time >= solver.parameters.max_deterministic_time * 0.999
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        # No solution within the limit (the hint was not even checked): keep the start plan.
        return Plan(dict(start.offsets), start.arena_size, bound, "cpsat", "FEASIBLE", floor, seconds,
                    reproducible=on_budget, **extra)
    result = {b.name: solver.value(offsets[b.name]) if b.name in offsets else 0 for b in buffers}
    chosen = [a for a in usable if solver.boolean_value(taken[a.pair])]
    for a in chosen:
        if a.temp is not None:
            result[a.temp.name] = solver.value(offsets[a.temp.name]) if a.temp.name in offsets else 0
    placed = buffers + [a.temp for a in chosen if a.temp is not None]
    size = max((result[b.name] + b.size for b in placed), default=0)
    proven = max(floor, -(-(int(solver.best_objective_bound) - scale + 1) // scale))
    optimal = status == cp_model.OPTIMAL or size <= proven
    extra["aliases"] = tuple(a.pair for a in chosen)
    return Plan(result, size, bound, "cpsat", "OPTIMAL" if optimal else "FEASIBLE",
                size if optimal else proven, seconds, reproducible=optimal or on_budget, **extra)


class _ArenaProgress(cp_model.CpSolverSolutionCallback):
    """The best arena found and the proven bound, on the terminal's progress line."""

    def __init__(self, scale: int, floor: int, best: int):
        super().__init__()
        self.scale, self.floor, self.best, self.bound = scale, floor, best, floor
        progress.update(self.text())

    def text(self) -> str:
        return f"best {self.best:,} B, bound {self.bound:,} B"

    def on_solution_callback(self) -> None:
        self.best = min(self.best, int(self.objective_value) // self.scale)
        progress.update(self.text())

    def on_bound(self, bound: float) -> None:
        self.bound = max(self.floor, -(-(int(bound) - self.scale + 1) // self.scale))
        progress.update(self.text())


def _progress_reporter(solver: cp_model.CpSolver, scale: int, floor: int, best: int) -> _ArenaProgress | None:
    """A solution callback for the progress line when it is shown (the search is the same)."""
    if not progress.enabled():
        return None
    reporter = _ArenaProgress(scale, floor, best)
    solver.best_bound_callback = reporter.on_bound
    return reporter
