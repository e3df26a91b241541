"""CP-SAT planner: bounded by the live bound and by greedy, valid, optimal when it says so,
deterministic, and within its time limit on a 500-buffer instance."""

from __future__ import annotations

import itertools
import random
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.memory import Buffer, lower_bound, plan_memory, validate_plan
from codegen.memory.buffers import align_up


@st.composite
def lifetimes(draw, max_buffers=14):
    n = draw(st.integers(1, max_buffers))
    align = draw(st.sampled_from([1, 4, 16]))
    bufs = []
    for i in range(n):
        first = draw(st.integers(0, 12))
        last = draw(st.integers(first, 14))
        bufs.append(Buffer(f"b{i}", draw(st.integers(0, 3000)), first, last, align))
    return bufs


@settings(max_examples=80, deadline=None)
@given(lifetimes())
def test_bound_le_cpsat_le_greedy_le_linear(bufs):
    import codegen.memory.cpsat as cpsat

    # The solver stops on its deterministic budget (0.35 units), never on the wall clock (60 s):
    # "cpsat" and "auto" then end at the same plan however loaded the machine is.
    with mock.patch.object(cpsat, "DETERMINISTIC_SHARE", 0.35 / 60):
        plans = {p: plan_memory(bufs, p, time_limit=60.0) for p in ("cpsat", "greedy", "linear", "auto")}
    for plan in plans.values():
        validate_plan(bufs, plan)
    bound = lower_bound(bufs)
    assert bound <= plans["cpsat"].arena_size <= plans["greedy"].arena_size <= plans["linear"].arena_size
    assert plans["auto"].arena_size == min(plans["cpsat"].arena_size, plans["greedy"].arena_size)
    for plan in plans.values():
        assert plan.proven_bound <= plan.arena_size
        assert (plan.status == "OPTIMAL") == (plan.arena_size == plan.proven_bound)


def _brute_force(bufs: list[Buffer]) -> int:
    """Least arena by enumeration. In a plan where no buffer can slide down, each buffer rests
    at 0 or at the aligned end of a buffer below it: try every order and every resting place."""
    best = None
    live = [b for b in bufs if b.size]
    for perm in itertools.permutations(live):
        def place(k, offs, top):
            nonlocal best
            if best is not None and top >= best:
                return
            if k == len(perm):
                best = top
                return
            b = perm[k]
            spots = {0} | {align_up(o + p.size, b.align) for p, o in offs}
            for off in sorted(spots):
                if all(not b.overlaps_in_time(p) or off >= o + p.size or o >= off + b.size for p, o in offs):
                    place(k + 1, offs + [(b, off)], max(top, off + b.size))
        place(0, [], 0)
    return best or 0


@settings(max_examples=40, deadline=None)
@given(lifetimes(max_buffers=5))
def test_optimal_means_optimal(bufs):
    plan = plan_memory(bufs, "cpsat", time_limit=2.0)
    assert plan.status == "OPTIMAL"
    assert plan.arena_size == _brute_force(bufs)


def _random_instance(n: int, seed: int, steps: int, span: int) -> list[Buffer]:
    r = random.Random(seed)
    bufs = []
    for i in range(n):
        first = r.randint(0, steps)
        bufs.append(Buffer(f"t{i}", r.randint(1, 5000), first, min(steps + 2, first + r.randint(0, span)), 16))
    return bufs


def test_solver_improves_on_greedy_and_proves_it():
    bufs = [Buffer("b0", 64, 3, 4), Buffer("b1", 112, 2, 2), Buffer("b2", 80, 1, 3), Buffer("b3", 64, 3, 4)]
    greedy, auto = plan_memory(bufs, "greedy"), plan_memory(bufs, "auto")
    assert (greedy.arena_size, greedy.status) == (256, "FEASIBLE")
    assert (auto.arena_size, auto.status, auto.planner) == (208, "OPTIMAL", "cpsat")
    assert lower_bound(bufs) == 208


def test_auto_skips_the_solver_when_greedy_is_on_the_bound():
    bufs = [Buffer("a", 1000, 0, 1), Buffer("b", 1000, 2, 3), Buffer("c", 500, 1, 2)]
    plan = plan_memory(bufs, "auto")
    assert (plan.planner, plan.status, plan.arena_size) == ("greedy", "OPTIMAL", lower_bound(bufs))
    assert plan_memory(bufs, "cpsat").planner == "cpsat"


def test_deterministic_when_proven():
    # The solver proves this one optimal after 0.76 units of deterministic time (0.6 s on an idle
    # machine, 21 s at a load of 16 on 2 cores) and improves greedy by 5 %. The limit is a net far
    # above that, and so is its deterministic budget (35 % of it): the proof ends the search.
    bufs = _random_instance(40, 4, 30, 15)
    plans = [plan_memory(bufs, "cpsat", time_limit=600.0) for _ in range(3)]
    assert len({tuple(sorted(p.offsets.items())) for p in plans}) == 1
    assert all(p.reproducible and p.status == "OPTIMAL" for p in plans)
    assert plans[0].arena_size < plan_memory(bufs, "greedy").arena_size


def test_deterministic_when_stopped_on_budget(monkeypatch):
    import codegen.memory.cpsat as cpsat

    # A small deterministic budget (0.1 units), far below the wall-clock net (600 s, so that a
    # loaded machine does not reach it first): the search stops unfinished, at the same point of
    # its work every time.
    monkeypatch.setattr(cpsat, "DETERMINISTIC_SHARE", 0.1 / 600)
    bufs = _random_instance(40, 4, 30, 15)
    plans = [plan_memory(bufs, "cpsat", time_limit=600.0) for _ in range(3)]
    assert len({tuple(sorted(p.offsets.items())) for p in plans}) == 1
    assert all(p.reproducible and p.status == "FEASIBLE" for p in plans)


def test_500_buffers_within_the_time_limit():
    r = random.Random(0)
    bufs = []
    for i in range(500):
        first = r.randint(0, 100)
        bufs.append(Buffer(f"t{i}", r.randint(1, 5000), first, first + r.randint(0, 15), 16))
    limit = 2.0
    plan = plan_memory(bufs, "cpsat", time_limit=limit)
    validate_plan(bufs, plan)
    assert plan.seconds <= limit + 0.25, plan.seconds  # + reading and validating the solution
    assert lower_bound(bufs) <= plan.arena_size <= plan_memory(bufs, "greedy").arena_size


def test_unknown_planner_is_refused():
    with pytest.raises(ValueError, match="unknown planner"):
        plan_memory([], "best")
