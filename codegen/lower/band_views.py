"""Zero-copy bands: the Slice and Concat nodes of a patched stage become views, after lowering.

A patched stage reads its input band by band (Slice along H) and assembles its output from
the bands (Concat along H). With N = 1 both are contiguous blocks of an NHWC tensor, so no
copy is needed: each input band is a view into the stage input at a byte offset, and the last
op of each band writes straight into its rows of the stage output (MCUNetV2's patch buffers).
That is what makes the stage pay: otherwise every band's output would stay live until the
Concat and the input bands would take arena space of their own.

Only nodes named with `PATCH_PREFIX` (made by codegen.fusion.patch) are rewritten here; a Slice
or Concat that is not contiguous, or whose tensors are graph inputs/outputs in the wrong place,
keeps its copy. The model's own Concats of contiguous blocks get the same views from
`concat_views`, which the compiler takes where they do not grow the arena. In-place reuse
declared on a call that reads or writes a partial view is dropped: the planner's aliases are
about whole buffers.
"""

from __future__ import annotations

import copy

import numpy as np

from codegen.fusion.patch_geometry import PATCH_PREFIX
from codegen.ir.graph import Node
from codegen.lower.context import LowerContext
from codegen.lower.kernel import ConstArray
from codegen.ops.index_map import index_map_plan
from codegen.ops.slice import slice_picks



def _make_view(ctx: LowerContext, name: str, source: str, offset: int, viewed: set[str]) -> None:
    """`name` becomes bytes [offset, ..) of `source`'s storage; values that shared `name`'s
    storage follow it."""
    root, base = ctx.root(source), ctx.offset(source) + offset
    for v, r in list(ctx.aliases.items()):
        if r == name:
            ctx.aliases[v] = root
            ctx.view_offsets[v] = base + ctx.offset(v)
            viewed.add(v)
    ctx.aliases[name] = root
    ctx.view_offsets[name] = base
    viewed.add(name)


def _drop_call(ctx: LowerContext, writes: str, reads: str, kernel: str) -> bool:
    """Remove the one call of `kernel` that writes `writes` from `reads` (and its own constants)."""
    found = [c for c in ctx.calls if c.kernel == kernel and c.writes == [writes] and c.reads == [reads]]
    if len(found) != 1:
        return False
    call = found[0]
    ctx.calls.remove(call)
    owned = {id(v) for v in call.params.values()}
    ctx.consts[:] = [c for c in ctx.consts if id(c) not in owned]
    return True


def _free(ctx: LowerContext, name: str) -> bool:
    """A value a view may be made of: an arena activation that is not already a view."""
    v = ctx.g.values[name]
    return not v.is_const and not ctx.is_io(name) and ctx.root(name) == name


def _slice_view(ctx: LowerContext, node: Node, viewed: set[str]) -> None:
    x, out = node.inputs[0], node.outputs[0]
    xv = ctx.g.values[x]
    if xv.is_const or not _free(ctx, out):
        return
    itemsize = xv.nbytes // max(xv.size, 1)
    dims, tables, chunk = index_map_plan(xv.shape, itemsize, slice_picks(node, xv.shape))
    first = int(tables[0][0])
    block = np.arange(dims[0], dtype=np.int64) * chunk + first  # consecutive chunks from `first`
    if len(dims) != 1 or not np.array_equal(tables[0], block) or dims[0] * chunk != ctx.g.values[out].nbytes:
        return  # not one contiguous block
    if _drop_call(ctx, out, x, "index_map"):
        _make_view(ctx, out, x, first, viewed)


def _concat_view(ctx: LowerContext, node: Node, viewed: set[str]) -> None:
    out = node.outputs[0]
    shape = ctx.g.values[out].shape
    axis = int(node.attrs["axis"]) % len(shape)
    if any(d != 1 for d in shape[:axis]) or ctx.root(out) != out:
        return  # the inputs are not contiguous blocks of the output
    offset = 0
    for name in node.inputs:
        nbytes = ctx.g.values[name].nbytes
        if node.inputs.count(name) == 1 and _free(ctx, name) and _drop_call(ctx, out, name, "concat"):
            _make_view(ctx, name, out, offset, viewed)
        offset += nbytes


def _share_constants(ctx: LowerContext) -> None:
    """One flash array per distinct constant: every band lowers its own copy of the stage's
    weights, multipliers and biases, all equal to the first band's."""
    first: dict[tuple, ConstArray] = {}
    same: dict[int, ConstArray] = {}
    for c in ctx.consts:
        same[id(c)] = first.setdefault((c.dtype, c.data.shape, c.data.tobytes()), c)
    ctx.consts[:] = list(first.values())
    for call in ctx.calls:
        call.params = {k: same.get(id(v), v) if isinstance(v, ConstArray) else v for k, v in call.params.items()}
        call.args = [same.get(id(a), a) if isinstance(a, ConstArray) else a for a in call.args]


def apply_band_views(ctx: LowerContext) -> LowerContext:
    """Turn the patch Slice/Concat copies of `ctx` into views and share the bands' constants
    (in place; returns `ctx`). Nothing changes in a graph without patch nodes."""
    patch_nodes = [n for n in ctx.g.nodes if n.name.startswith(PATCH_PREFIX)]
    if patch_nodes:
        _share_constants(ctx)
    viewed: set[str] = set()
    for node in patch_nodes:
        if node.op == "Slice":
            _slice_view(ctx, node, viewed)
        elif node.op == "Concat":
            _concat_view(ctx, node, viewed)
    _drop_inplace_on_views(ctx, viewed)
    return ctx


def _drop_inplace_on_views(ctx: LowerContext, viewed: set[str]) -> None:
    for call in ctx.calls:
        kept = [(o, i) for o, i in call.inplace_ok if o not in viewed and i not in viewed]
        if kept != call.inplace_ok:
            call.inplace_ok = kept
            if not kept:
                call.inplace_kernel, call.inplace_temp, call.inplace_overlap = None, 0, None


def concat_views(ctx: LowerContext) -> LowerContext | None:
    """A copy of `ctx` in which every other Concat whose inputs are contiguous blocks of its
    output (the dimensions before its axis all 1: a [1, K] vector's, or an N = 1 tensor's
    along H) has no copy: each input's producer writes straight into its block of the output.
    None when no Concat qualifies. The caller keeps it only where the arena is not larger: the
    output's storage then lives from its first input's producer on."""
    cats = [n for n in ctx.g.nodes if n.op == "Concat" and not n.name.startswith(PATCH_PREFIX)]
    if not cats or any(v.state is not None for v in ctx.g.values.values()):
        return None  # a streaming model's Concat of its state keeps its copy (state aliases it)
    out = copy.copy(ctx)
    out.calls = [copy.copy(c) for c in ctx.calls]
    out.consts, out.aliases, out.view_offsets = list(ctx.consts), dict(ctx.aliases), dict(ctx.view_offsets)
    viewed: set[str] = set()
    for node in cats:
        _concat_view(out, node, viewed)
    if not viewed:
        return None
    _drop_inplace_on_views(out, viewed)
    return out
