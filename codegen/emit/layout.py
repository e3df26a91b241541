"""From the lowered program to arena buffers: lifetimes, aliases and scratch space."""

from __future__ import annotations

from codegen.ir.types import np_dtype
from codegen.lower.context import LowerContext
from codegen.lower.kernel import ScratchArg
from codegen.memory import Buffer


def scratch_name(call_index: int, arg_index: int) -> str:
    return f"scratch_{call_index}_{arg_index}"


def arena_buffers(ctx: LowerContext) -> list[Buffer]:
    """One buffer per stored activation (aliases merged into their root) and per scratch arg.

    Graph inputs and outputs live in the caller's buffers, constants in flash: neither is
    in the arena. A buffer is live from the first call that writes it to the last that reads it.
    """
    g = ctx.g
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    scratch: list[Buffer] = []
    align = ctx.target.alignment
    for step, call in enumerate(ctx.calls):
        for name in call.writes:
            root = ctx.root(name)
            first.setdefault(root, step)
            last[root] = max(last.get(root, step), step)
        for name in call.reads:
            root = ctx.root(name)
            if root in first:
                last[root] = max(last[root], step)
        for k, arg in enumerate(call.args):
            if isinstance(arg, ScratchArg):
                scratch.append(Buffer(scratch_name(step, k), arg.nbytes, step, step, align))
    buffers = []
    for root, start in first.items():
        if ctx.is_io(root) or g.values[root].is_const:
            continue
        v = g.values[root]
        size = v.size * np_dtype(v.dtype).itemsize
        buffers.append(Buffer(root, size, start, last[root], align))
    return sorted(buffers + scratch, key=lambda b: (b.first, b.name))
