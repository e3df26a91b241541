"""Placement algorithms behind the one interface of buffers.py."""

from __future__ import annotations

import time

from codegen.memory.buffers import (Alias, Buffer, Plan, _live_bytes, align_up, alias_bound, least_shift,
                                    lower_bound, usable_aliases)


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
    its step already has one."""
    first = {b.name: b.first for b in buffers}
    chosen, steps = [], set()
    for a in usable_aliases(buffers, aliases):
        if first[a.out] not in steps:
            chosen.append(a)
            steps.add(first[a.out])
    return chosen


def _groups(buffers: list[Buffer], chosen: list[Alias]) -> list[list[tuple[int, Buffer]]]:
    """Buffers placed together (chains of chosen aliases) with their offsets relative to the
    group's base; each temp is a group of its own."""
    by = {b.name: b for b in buffers}
    links: dict[str, list[tuple[str, int]]] = {}
    for a in chosen:
        s = least_shift(a, by[a.out].align)
        links.setdefault(a.out, []).append((a.inp, s))  # rel[inp] = rel[out] + s
        links.setdefault(a.inp, []).append((a.out, -s))
    seen: set[str] = set()
    groups = []
    for b in buffers:
        if b.name in seen:
            continue
        rel, todo = {b.name: 0}, [b.name]
        while todo:
            x = todo.pop()
            for y, s in links.get(x, ()):
                if y not in rel:
                    rel[y] = rel[x] + s
                    todo.append(y)
        seen.update(rel)
        low = min(rel.values())
        groups.append([(r - low, by[n]) for n, r in rel.items()])
    return groups + [[(0, a.temp)] for a in chosen if a.temp is not None]


def place_greedy(buffers: list[Buffer], chosen: list[Alias]) -> dict[str, int]:
    """Largest group first, each at the lowest base where every member is free during its
    lifetime (members of one group keep their relative offsets)."""
    order = sorted(_groups(buffers, chosen),
                   key=lambda g: (-max(r + b.size for r, b in g), min(b.first for _, b in g), g[0][1].name))
    placed: list[tuple[int, Buffer]] = []
    offsets: dict[str, int] = {}
    for group in order:
        align = max(b.align for _, b in group)
        names = {b.name for _, b in group}
        members = [(r, b, sorted((off, off + o.size) for off, o in placed
                                 if o.size and o.name not in names and o.overlaps_in_time(b)))
                   for r, b in group if b.size]
        # the lowest base is 0 or puts some member just above some busy block
        bases = sorted({0} | {align_up(max(end - r, 0), align) for r, _, busy in members for _, end in busy})
        base = next(x for x in bases if all(x + r + b.size <= start or end <= x + r
                                            for r, b, busy in members for start, end in busy))
        for r, b in group:
            offsets[b.name] = base + r
            placed.append((base + r, b))
    return offsets


def plan_greedy_by_size(buffers: list[Buffer], aliases: list[Alias] = ()) -> Plan:
    """TFLite Micro's algorithm: largest first, each at the lowest gap free during its lifetime.

    With declared aliases, the in-place choice is greedy too: the usable aliases
    (`greedy_aliases`) of the steps whose live bytes reach a threshold, for each threshold
    from the highest step down to all of them, the buffers of a chain of aliases placed as
    one block; the smallest arena wins (the fewest aliases on ties, none if they do not pay).
    Taking every alias at once can lose: partial overlaps chain the whole network into one
    block that drifts down by each layer's shift.
    """
    t0 = time.perf_counter()
    plan = _plan("greedy", buffers, place_greedy(buffers, []), t0, aliases)
    usable = greedy_aliases(buffers, aliases)
    if usable:
        by = {b.name: b for b in buffers}
        live = {t: _live_bytes([b for b in buffers if b.first <= t <= b.last])
                for t in {by[a.out].first for a in usable}}
        for threshold in sorted(set(live.values()), reverse=True):
            chosen = [a for a in usable if live[by[a.out].first] >= threshold]
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
