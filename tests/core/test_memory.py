"""Planner invariants on random lifetimes: valid, bound <= arena <= sum, greedy <= linear."""

from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.memory import Buffer, PlanError, lower_bound, plan_greedy_by_size, plan_linear, validate_plan
from codegen.memory.buffers import Plan

import pytest


@st.composite
def buffer_sets(draw):
    n = draw(st.integers(1, 25))
    align = draw(st.sampled_from([1, 4, 16]))  # Kiln aligns every buffer of a plan alike
    bufs = []
    for i in range(n):
        first = draw(st.integers(0, 20))
        last = draw(st.integers(first, 22))
        bufs.append(Buffer(f"b{i}", draw(st.integers(1, 5000)), first, last, align))
    return bufs


@settings(max_examples=200, deadline=None)
@given(buffer_sets())
def test_planners_are_valid_and_bounded(bufs):
    total = sum(b.size + b.align - 1 for b in bufs)  # worst case: every start padded
    greedy, linear = plan_greedy_by_size(bufs), plan_linear(bufs)
    for plan in (greedy, linear):
        validate_plan(bufs, plan)
        assert lower_bound(bufs) <= plan.arena_size <= total
    if bufs[0].align == 1:  # with padding, largest-first can lose a few bytes to linear order
        assert greedy.arena_size <= linear.arena_size


def test_validator_catches_overlap_of_live_buffers():
    a, b = Buffer("a", 100, 0, 2), Buffer("b", 100, 1, 3)
    with pytest.raises(PlanError, match="overlap"):
        validate_plan([a, b], Plan({"a": 0, "b": 64}, 200, 200, "test", "FEASIBLE"))


def test_validator_catches_misalignment_and_overrun():
    a = Buffer("a", 100, 0, 2, 16)
    with pytest.raises(PlanError, match="aligned"):
        validate_plan([a], Plan({"a": 8}, 200, 100, "test", "FEASIBLE"))
    with pytest.raises(PlanError, match="outside"):
        validate_plan([a], Plan({"a": 0}, 50, 100, "test", "FEASIBLE"))


def test_disjoint_lifetimes_share_memory():
    bufs = [Buffer("a", 1000, 0, 1), Buffer("b", 1000, 2, 3), Buffer("c", 500, 1, 2)]
    plan = plan_greedy_by_size(bufs)
    assert plan.arena_size == lower_bound(bufs) == 1508
