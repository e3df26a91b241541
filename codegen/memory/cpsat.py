"""Proven-optimal placement: the arena as a 2-D packing (time x address) solved by OR-Tools CP-SAT.

Each buffer is a rectangle whose time side is fixed (its lifetime) and whose address side
slides: offset = align * k. One NoOverlap2D keeps live buffers apart, every rectangle ends
below the arena size, and the arena size is minimised. The greedy plan is given as a hint, so
the solver starts from it and can only improve on it; the live-bytes lower bound is given as
the objective's floor, so a plan that reaches it is proven at once.

Determinism: the build output must be byte-identical across runs, so the search must not
depend on thread timing. CP-SAT's interleaved search runs its strategies in fixed batches
(deterministic for any number of workers), with a fixed seed, and stops on *deterministic*
time (a count of work, not seconds). A wall-clock limit of the same length is kept as a
safety net only; see `solve_cpsat` for what happens when it is the one that stops the search.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from codegen.memory.buffers import Buffer, Plan, lower_bound

SEED = 20240601
WORKERS = 2
# Deterministic time runs faster than the wall clock on this kind of machine: stop the search
# on this share of the user's limit, so the wall-clock net (the full limit) is rarely reached.
DETERMINISTIC_SHARE = 0.5


def _params(solver: cp_model.CpSolver, time_limit: float) -> None:
    p = solver.parameters
    p.random_seed = SEED
    p.num_workers = WORKERS
    p.interleave_search = True
    p.max_deterministic_time = max(time_limit * DETERMINISTIC_SHARE, 0.01)
    p.max_time_in_seconds = max(time_limit, 0.01)
    p.log_search_progress = False


def solve_cpsat(buffers: list[Buffer], start: Plan, time_limit: float = 10.0) -> Plan:
    """Minimise the arena, starting from `start` (a valid plan, used as hint and upper bound).

    Returns a plan with status OPTIMAL when the solver proves no smaller arena exists (or the
    start already sits on the lower bound, then the solver is not run), FEASIBLE otherwise.
    `proven_bound` is the best lower bound known: the solver's, if it is above the live bound.
    """
    t0 = time.perf_counter()
    bound = lower_bound(buffers)
    if start.arena_size <= bound:
        return Plan(dict(start.offsets), start.arena_size, bound, "cpsat", "OPTIMAL", bound,
                    time.perf_counter() - t0)
    ub = start.arena_size
    model = cp_model.CpModel()
    arena = model.new_int_var(bound, ub, "arena")
    times, addrs, offsets = [], [], {}
    for i, b in enumerate(buffers):
        if b.size == 0:
            continue
        k = model.new_int_var(0, (ub - b.size) // b.align, f"k{i}")
        off = model.new_int_var(0, ub - b.size, f"o{i}")
        model.add(off == b.align * k)
        model.add(off + b.size <= arena)
        model.add_hint(k, start.offsets[b.name] // b.align)
        model.add_hint(off, start.offsets[b.name])
        offsets[b.name] = off
        times.append(model.new_fixed_size_interval_var(b.first, b.last - b.first + 1, f"t{i}"))
        addrs.append(model.new_fixed_size_interval_var(off, b.size, f"a{i}"))
    model.add_no_overlap_2d(times, addrs)
    model.add_hint(arena, ub)
    model.minimize(arena)

    solver = cp_model.CpSolver()
    _params(solver, time_limit)
    status = solver.solve(model)
    seconds = time.perf_counter() - t0
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        # No solution within the limit (the hint was not even checked): keep the start plan.
        return Plan(dict(start.offsets), start.arena_size, bound, "cpsat", "FEASIBLE", bound, seconds)
    result = {b.name: solver.value(offsets[b.name]) if b.name in offsets else 0 for b in buffers}
    size = max((result[b.name] + b.size for b in buffers), default=0)
    proven = max(bound, int(solver.best_objective_bound))
    optimal = status == cp_model.OPTIMAL or size <= proven
    return Plan(result, size, bound, "cpsat", "OPTIMAL" if optimal else "FEASIBLE",
                size if optimal else proven, seconds)
