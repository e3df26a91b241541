"""Debug builds with canaries (`kiln build --debug-canaries`, CompileOptions.canaries).

AddressSanitizer sees the arena as one object: a kernel that writes past the end of its
output buffer into the next buffer of the arena goes unnoticed. A canary build therefore
pads every arena buffer with `size` canary bytes (the planner places the padded buffers, so
a canary never overlaps data that is live with it), frames the whole arena with two more
runs of canary bytes, and after each kernel call checks the canaries of every buffer live
at that call and the frame. `<name>_run` then returns `<NAME>_ERR_CANARY` and sets
`<name>_last_error_call` to the call that broke one (-1: the frame changed between two runs,
i.e. outside Kiln). In-place reuse is off in such builds. Without the option nothing of
this is emitted: the default output is unchanged byte for byte.

Offsets in the plan are relative to the start of the guarded array:
`[frame canary][arena, buffers each followed by its canary][frame canary]`.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.memory import Buffer, Plan

MIN_CANARY_BYTES = 16


@dataclass(frozen=True)
class CanaryStep:
    """Canaries around one kernel call: filled just before it (buffers born at this call),
    checked just after it (the frame, and every buffer live at this call)."""

    fill: tuple[int, ...]
    check: tuple[int, ...]


@dataclass(frozen=True)
class CanaryPlan:
    size: int  # bytes of each canary run; a multiple of the arena alignment
    guarded_size: int  # bytes of the guarded array: frame + arena + frame
    frame: tuple[int, int]  # offsets of the two frame canaries
    steps: tuple[CanaryStep, ...]  # one per kernel call, in call order
    call_names: tuple[str, ...]  # C names of the calls ("conv2d_3"), for <name>_call_names


def canary_bytes(alignment: int) -> int:
    """Canary length: at least 16 bytes, and a multiple of the alignment so that the arena
    and every padded buffer stay aligned."""
    return -(-max(MIN_CANARY_BYTES, alignment) // alignment) * alignment


def padded(buffers: list[Buffer], size: int) -> list[Buffer]:
    """The buffers, each `size` bytes longer: room for its canary right after its data."""
    return [Buffer(b.name, b.size + size, b.first, b.last, b.align) for b in buffers]


def canary_plan(buffers: list[Buffer], plan: Plan, call_names: list[str], size: int) -> CanaryPlan:
    """Where the canaries go and when each is filled and checked. `buffers` are the padded
    buffers the plan placed."""
    arena = max(plan.arena_size, 1)  # the emitter never declares an empty array
    frame = (0, size + arena)
    canary_at = {b.name: size + plan.offsets[b.name] + b.size - size for b in buffers}
    steps = []
    for k in range(len(call_names)):
        fill = sorted(canary_at[b.name] for b in buffers if b.first == k)
        live = sorted(canary_at[b.name] for b in buffers if b.first <= k <= b.last)
        steps.append(CanaryStep(tuple(fill), frame + tuple(live)))
    return CanaryPlan(size, 2 * size + arena, frame, tuple(steps), tuple(call_names))
