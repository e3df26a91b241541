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


class PlanError(Exception):
    """An emitted plan breaks an invariant: a bug in Kiln, never the user's fault."""


def validate_plan(buffers: list[Buffer], plan: Plan) -> None:
    """Independent check of a plan: aligned, inside the arena, no overlap of live buffers."""
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
            if a.size and b.size and a.overlaps_in_time(b):
                raise PlanError(f"buffers {a.name} and {b.name} are live together and overlap")
