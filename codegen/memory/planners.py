"""Placement algorithms behind the one interface of buffers.py."""

from __future__ import annotations

import time

from codegen.memory.buffers import Alias, Buffer, Plan, align_up, alias_bound, lower_bound, usable_aliases


def _plan(name: str, buffers: list[Buffer], offsets: dict[str, int], t0: float,
          aliases: list[Alias] = (), chosen: list[Alias] = ()) -> Plan:
    temps = [a.temp for a in chosen if a.temp is not None]
    arena = max((offsets[b.name] + b.size for b in buffers + temps), default=0)
    bound = lower_bound(buffers)
    floor = alias_bound(buffers, aliases) if aliases else bound
    return Plan(offsets, arena, bound, name, "OPTIMAL" if arena <= floor else "FEASIBLE", floor,
                time.perf_counter() - t0, aliases=tuple(a.pair for a in chosen),
                alias_bound=floor if aliases else None)


def plan_linear(buffers: list[Buffer], aliases: list[Alias] = ()) -> Plan:
    """Every buffer at its own address: the baseline, no reuse at all (aliases not taken)."""
    t0 = time.perf_counter()
    offsets, top = {}, 0
    for b in buffers:
        top = align_up(top, b.align)
        offsets[b.name] = top
        top += b.size
    return _plan("linear", buffers, offsets, t0, aliases)


def greedy_aliases(buffers: list[Buffer], aliases: list[Alias]) -> list[Alias]:
    """The in-place choice taken greedily: every usable alias, in declaration order, unless
    one of its buffers is already reused at that step."""
    chosen, outs, ins = [], set(), set()
    for a in usable_aliases(buffers, aliases):
        if a.out not in outs and a.inp not in ins:
            chosen.append(a)
            outs.add(a.out)
            ins.add(a.inp)
    return chosen


def _groups(buffers: list[Buffer], chosen: list[Alias]) -> list[list[Buffer]]:
    """Buffers that share one offset (chains of chosen aliases), plus each temp on its own."""
    parent = {b.name: b.name for b in buffers}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a in chosen:
        parent[find(a.out)] = find(a.inp)
    groups: dict[str, list[Buffer]] = {}
    for b in buffers:
        groups.setdefault(find(b.name), []).append(b)
    return list(groups.values()) + [[a.temp] for a in chosen if a.temp is not None]


def place_greedy(buffers: list[Buffer], chosen: list[Alias]) -> dict[str, int]:
    """Largest group first, each at the lowest gap free during all its members' lifetimes."""
    order = sorted(_groups(buffers, chosen),
                   key=lambda g: (-max(b.size for b in g), min(b.first for b in g), g[0].name))
    placed: list[tuple[int, Buffer]] = []
    offsets: dict[str, int] = {}
    for group in order:
        align = max(b.align for b in group)
        names = {b.name for b in group}
        busy = sorted((off, off + o.size) for off, o in placed
                      if o.size and o.name not in names and any(o.overlaps_in_time(b) for b in group))
        size = max(b.size for b in group)
        candidate = 0
        for start, end in busy:
            if align_up(candidate, align) + size <= start:
                break
            candidate = max(candidate, end)
        for b in group:
            offsets[b.name] = align_up(candidate, align)
            placed.append((offsets[b.name], b))
    return offsets


def plan_greedy_by_size(buffers: list[Buffer], aliases: list[Alias] = ()) -> Plan:
    """TFLite Micro's algorithm: largest first, each at the lowest gap free during its lifetime.

    With declared aliases, the in-place choice is greedy too (`greedy_aliases`): the buffers
    of a chain of aliases are placed as one block; the plan without aliases is kept when
    it happens to be smaller.
    """
    t0 = time.perf_counter()
    plan = _plan("greedy", buffers, place_greedy(buffers, []), t0, aliases)
    chosen = greedy_aliases(buffers, aliases)
    if chosen:
        inplace = _plan("greedy", buffers, place_greedy(buffers, chosen), t0, aliases, chosen)
        if inplace.arena_size < plan.arena_size:
            plan = inplace
    # Alignment padding can make largest-first lose to plain stacking when everything is live
    # at once (sizes 2 and 257, 4-aligned: 262 against 261): never be worse than the baseline.
    linear = plan_linear(buffers)
    if linear.arena_size < plan.arena_size:
        return _plan("greedy", buffers, dict(linear.offsets), t0, aliases)
    return plan


PLANNERS = {"linear": plan_linear, "greedy": plan_greedy_by_size}
