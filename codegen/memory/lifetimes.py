"""Buffer lifetimes of the lowered program: arena buffers (activations, scratch space) from the
call that writes each to the last that reads it, and the in-place aliases the kernels allow."""

from __future__ import annotations

from codegen.ir.types import np_dtype
from codegen.lower.context import LowerContext
from codegen.lower.kernel import ScratchArg
from codegen.memory.buffers import Alias, Buffer


def scratch_name(call_index: int, arg_index: int) -> str:
    return f"scratch_{call_index}_{arg_index}"


def arena_buffers(ctx: LowerContext, io_in_arena: bool = False) -> list[Buffer]:
    """One buffer per stored activation (aliases merged into their root) and per scratch arg.

    Constants live in flash and a streaming model's variables in the persistent state region,
    never in the arena. Graph inputs and outputs live in the caller's buffers, unless
    `io_in_arena` (--io-in-arena): then an input is a buffer from step -1 (the caller writes it
    before the first call) to its last reader, an output from the call that writes it to step
    len(calls) (the caller reads it after the last call), so that the planner reuses an input's
    bytes once it is read. A buffer is live from the first call that writes it to the last that
    reads it.
    """
    g = ctx.g
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    scratch: list[Buffer] = []
    align = ctx.target.alignment
    if io_in_arena:
        for name in g.inputs:
            first[name] = last[name] = -1
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
    if io_in_arena:
        for name in g.outputs:
            first.setdefault(name, -1)  # an output no call writes (an input, a constant): the caller's
            last[name] = len(ctx.calls)
    buffers = []
    for root, start in first.items():
        v = g.values[root]
        if (ctx.is_io(root) and not io_in_arena) or v.is_const or v.state is not None:
            continue  # the caller's, flash, or a variable's persistent state
        buffers.append(Buffer(root, value_bytes(ctx, root), start, last[root], align))
    return sorted(buffers + scratch, key=lambda b: (b.first, b.name))


def value_bytes(ctx: LowerContext, name: str) -> int:
    v = ctx.g.values[name]
    return v.size * np_dtype(v.dtype).itemsize


def io_bytes(ctx: LowerContext) -> int:
    """Bytes of the graph's inputs and outputs (a value both input and output counted once)."""
    return sum(value_bytes(ctx, n) for n in dict.fromkeys(ctx.g.inputs + ctx.g.outputs))


def arena_aliases(ctx: LowerContext, buffers: list[Buffer]) -> list[Alias]:
    """The in-place reuse the lowered calls allow, on arena buffers (view aliases resolved to
    their roots): one `Alias` per declared pair whose input dies at that call and whose output
    is born there. The temp of an in-place kernel variant is the call's next scratch slot, so
    the emitter finds it like any scratch buffer once the call takes that variant. A call that
    declared a partial overlap (`inplace_overlap`, convolution) gives an inexact alias for that
    pair: the input at least that many bytes above the output, the call's own kernel."""
    by = {b.name: b for b in buffers}
    out = []
    for step, call in enumerate(ctx.calls):
        for o, i in call.inplace_ok:
            bo, bi = by.get(ctx.root(o)), by.get(ctx.root(i))
            if bo is None or bi is None or bo.first != step or bi.last != step:
                continue
            temp = None
            if call.inplace_kernel is not None and call.inplace_temp:
                temp = Buffer(scratch_name(step, len(call.args)), call.inplace_temp, step, step,
                              ctx.target.alignment)
            if call.inplace_overlap is not None and i == call.inplace_overlap_input:
                out.append(Alias(bo.name, bi.name, shift=call.inplace_overlap, exact=False))
            else:
                out.append(Alias(bo.name, bi.name, temp))
    return out
