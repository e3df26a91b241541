"""Proven-optimal placement: the arena as a 2-D packing (time x address) solved by OR-Tools CP-SAT.

Each buffer is a rectangle whose time side is fixed (its lifetime) and whose address side
slides: offset = align * k. One NoOverlap2D keeps live buffers apart, every rectangle ends
below the arena size, and the arena size is minimised. The greedy plan is given as a hint, so
the solver starts from it and can only improve on it; the live-bytes lower bound is given as
the objective's floor, so a plan that reaches it is proven at once.

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

from codegen.memory.buffers import Buffer, Plan, lower_bound

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
                started: float | None = None) -> Plan:
    """Minimise the arena, starting from `start` (a valid plan, used as hint and upper bound).

    Returns a plan with status OPTIMAL when the solver proves no smaller arena exists (or the
    start already sits on the lower bound, then the solver is not run), FEASIBLE otherwise.
    `proven_bound` is the best lower bound known: the solver's, if it is above the live bound.
    The wall-clock limit counts from `started` (a `time.perf_counter()` value; default: now),
    so that a caller's own work (greedy, validation) is inside the limit too.
    """
    t0 = time.perf_counter() if started is None else started
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
    _params(solver, time_limit, time_limit - (time.perf_counter() - t0))
    status = solver.solve(model)
    seconds = time.perf_counter() - t0
    on_budget = solver.deterministic_time >= solver.parameters.max_deterministic_time * 0.999
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        # No solution within the limit (the hint was not even checked): keep the start plan.
        return Plan(dict(start.offsets), start.arena_size, bound, "cpsat", "FEASIBLE", bound, seconds,
                    reproducible=on_budget)
    result = {b.name: solver.value(offsets[b.name]) if b.name in offsets else 0 for b in buffers}
    size = max((result[b.name] + b.size for b in buffers), default=0)
    proven = max(bound, int(solver.best_objective_bound))
    optimal = status == cp_model.OPTIMAL or size <= proven
    return Plan(result, size, bound, "cpsat", "OPTIMAL" if optimal else "FEASIBLE",
                size if optimal else proven, seconds, reproducible=optimal or on_budget)
