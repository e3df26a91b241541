"""The planner interface: buffers with a size and a lifetime in, offsets and an arena size out."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Buffer:
    """A block of arena memory live from step `first` to step `last` inclusive."""

    name: str
    size: int
    first: int
    last: int
    align: int = 16

    def overlaps_in_time(self, other: "Buffer") -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass(frozen=True)
class Alias:
    """A permitted in-place reuse: `out` may start at the offset of `inp`.

    Declared by lowering for a kernel that reads element i of `inp` before it writes element i
    of `out` (elementwise ops, depthwise convolution one channel at a time). Valid only when
    `inp` dies at the step `out` is born (inp.last == out.first); the planner decides whether
    to take it, at most one per step (a step is one kernel call). `temp` is a buffer the
    in-place kernel needs at that step (the depthwise one-channel copy): it exists only when
    the alias is chosen.

    Partial overlap (a convolution whose output pixels only overwrite input pixels already
    consumed): `exact=False`, and the input must start at least `shift` bytes above the output
    (offset(inp) - offset(out) >= shift). `exact=True` (the default): offset(inp) -
    offset(out) == shift, normally 0 (the same start address).
    """

    out: str
    inp: str
    temp: Buffer | None = None
    shift: int = 0
    exact: bool = True

    @property
    def pair(self) -> tuple[str, str]:
        return (self.out, self.inp)


@dataclass(frozen=True)
class Plan:
    """Offsets of every buffer in one arena, with what is known about how good the arena is."""

    offsets: dict[str, int]
    arena_size: int
    lower_bound: int  # the live-bytes bound of `lower_bound()`
    planner: str
    status: str  # "OPTIMAL" when no smaller arena exists (arena == a proven bound), else "FEASIBLE"
    proven_bound: int | None = None  # best proven bound: the solver's when above `lower_bound`
    # Wall-clock planning time: for the CLI and benchmarks only, never written into build files
    # (they must be byte-identical across runs), hence left out of comparisons.
    seconds: float = field(default=0.0, compare=False)
    # False when a wall-clock limit, not a deterministic budget or a proof, ended the search:
    # the plan is valid but another run (on a busier machine) may place buffers differently.
    reproducible: bool = field(default=True, compare=False)
    # In-place reuse: the (out, inp) pairs of declared `Alias`es the planner took (their temps
    # are in `offsets`), and the least arena any plan using the declared aliases can reach.
    aliases: tuple[tuple[str, str], ...] = ()
    alias_bound: int | None = None  # None: no aliases were declared (then == lower_bound)


def align_up(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def _live_bytes(live: list[Buffer]) -> int:
    """Least arena that holds these buffers at once.

    With one alignment for all, every buffer but the topmost also occupies its padding up to
    the next aligned address; with mixed alignments only the raw sizes are certain.
    """
    if not live:
        return 0
    if len({b.align for b in live}) > 1:
        return sum(b.size for b in live)
    padded = [align_up(b.size, b.align) for b in live]
    return sum(padded) - max(p - b.size for p, b in zip(padded, live))


def lower_bound(buffers: list[Buffer]) -> int:
    """The largest total of bytes live at one step: no plan can use less."""
    steps = sorted({b.first for b in buffers})
    return max((_live_bytes([b for b in buffers if b.first <= t <= b.last]) for t in steps), default=0)


def usable_aliases(buffers: list[Buffer], aliases: list[Alias]) -> list[Alias]:
    """The declared aliases a plan may take: both buffers in the arena with a size, the input
    dying at the step the output is born (and born before it). Declarations that fail this are ignored, not errors:
    lowering declares what the kernel allows, the lifetimes decide what is safe."""
    by = {b.name: b for b in buffers}
    seen, out = set(), []
    for a in aliases:
        o, i = by.get(a.out), by.get(a.inp)
        if o is None or i is None or a.out == a.inp or a.pair in seen or not o.size or not i.size:
            continue
        if i.last != o.first or i.first == i.last or o.align != i.align or (a.exact and a.shift % o.align):
            continue  # (an input written at the step it dies is no input of that step's call)
        seen.add(a.pair)
        out.append(a)
    return out


def least_shift(a: Alias, align: int) -> int:
    """The least offset(inp) - offset(out) a taken alias allows with aligned offsets."""
    return a.shift if a.exact else max(align_up(a.shift, align), 0)


def _merged(live: list[Buffer], choice: list[Alias]) -> list[Buffer]:
    """The blocks occupied at one step when the aliases of `choice` are taken."""
    merged = {b.name: b for b in live}
    for a in choice:
        o, i = merged.pop(a.out), merged.pop(a.inp)
        s = least_shift(a, o.align)
        lo, hi = min(0, s), max(o.size, s + i.size)
        merged[a.out] = Buffer(a.out, hi - lo, o.first, o.last, o.align)
        if a.temp is not None:
            merged[a.temp.name] = a.temp
    return list(merged.values())


def alias_bound(buffers: list[Buffer], aliases: list[Alias]) -> int:
    """The lower bound when the planner may take the declared aliases: at each step, the least
    live bytes over taking none or one of the aliases born there. Never above
    `lower_bound`; equal to it when nothing is declared."""
    usable = usable_aliases(buffers, aliases)
    best = 0
    for t in sorted({b.first for b in buffers}):
        live = [b for b in buffers if b.first <= t <= b.last]
        here = [a for a in usable if any(b.name == a.out and b.first == t for b in live)]
        options: list[list[Alias]] = [[]] + [[a] for a in here]  # one reuse per step at most
        best = max(best, min(_live_bytes(_merged(live, opt)) for opt in options))
    return best


class PlanError(Exception):
    """An emitted plan breaks an invariant: a bug in Kiln, never the user's fault."""


def validate_plan(buffers: list[Buffer], plan: Plan, aliases: list[Alias] = ()) -> None:
    """Independent check of a plan: aligned, inside the arena, no overlap of live buffers.

    The only overlap allowed is between the two buffers of an alias that was declared and
    chosen, at the same offset, the input's last step being the output's first; the temp of
    a chosen alias is checked like any buffer.
    """
    declared: dict[tuple[str, str], Alias] = {}
    for a in aliases:
        declared.setdefault(a.pair, a)  # the first declaration of a pair counts, as in usable_aliases
    by_name = {b.name: b for b in buffers}
    allowed: set[frozenset[str]] = set()
    used_out, used_in, used_step = set(), set(), set()
    buffers = list(buffers)
    for pair in plan.aliases:
        a = declared.get(tuple(pair))
        if a is None:
            raise PlanError(f"alias {pair[0]} <- {pair[1]} was not declared")
        o, i = by_name.get(a.out), by_name.get(a.inp)
        if o is None or i is None:
            raise PlanError(f"alias {a.out} <- {a.inp} names a buffer outside the arena")
        if i.last != o.first or i.first == i.last:
            raise PlanError(f"alias {a.out} <- {a.inp}: {a.inp} dies at step {i.last}, "
                            f"{a.out} is born at step {o.first}")
        gap = plan.offsets.get(a.inp, 0) - plan.offsets.get(a.out, 0)
        if (gap != a.shift) if a.exact else (gap < a.shift):
            raise PlanError(f"alias {a.out} <- {a.inp}: offsets differ by {gap}, "
                            f"{'' if a.exact else 'at least '}{a.shift} allowed")
        if a.out in used_out or a.inp in used_in or o.first in used_step:
            raise PlanError(f"alias {a.out} <- {a.inp}: a second reuse at step {o.first}")
        used_step.add(o.first)
        used_out.add(a.out)
        used_in.add(a.inp)
        allowed.add(frozenset(pair))
        if a.temp is not None:
            buffers.append(a.temp)
    for b in buffers:
        off = plan.offsets.get(b.name)
        if off is None:
            raise PlanError(f"buffer {b.name} has no offset")
        if off % b.align:
            raise PlanError(f"buffer {b.name} at {off} is not {b.align}-byte aligned")
        if off < 0 or off + b.size > plan.arena_size:
            raise PlanError(f"buffer {b.name} [{off}, {off + b.size}) is outside the arena of {plan.arena_size}")
    by_start = sorted(buffers, key=lambda b: plan.offsets[b.name])
    for i, a in enumerate(by_start):
        a_end = plan.offsets[a.name] + a.size
        for b in by_start[i + 1:]:
            if plan.offsets[b.name] >= a_end:
                break
            if a.size and b.size and a.overlaps_in_time(b) and frozenset((a.name, b.name)) not in allowed:
                raise PlanError(f"buffers {a.name} and {b.name} are live together and overlap")
