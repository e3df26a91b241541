"""Data movement by per-axis index tables: the shared kernel of Slice, Gather, Tile, Expand,
Split, MirrorPad and nearest-neighbour Resize.

Each of these ops picks, for every output index along every axis, one input index along the
same axis (the output has the input's rank): out[o0, .., ok] = in[t0[o0], .., tk[ok]]. At
compile time the per-axis picks become byte offsets (index times the input's byte stride),
size-1 output axes fold into a base offset, trailing axes copied whole become one contiguous
chunk, and axes are merged (their offsets added pairwise) until at most MAX_DIMS remain. The
`index_map` kernel then walks the output in order, adding one table entry per loop level.
Any dtype: the kernel moves bytes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Node
from codegen.ir.types import np_dtype
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.reshape import emit_copy

MAX_DIMS = 6


def index_map_plan(in_shape: Sequence[int], itemsize: int, picks: Sequence[np.ndarray]
                   ) -> tuple[list[int], list[np.ndarray], int]:
    """(loop extents, byte-offset table per loop, contiguous chunk bytes) of an index map."""
    if len(picks) != len(in_shape):
        raise ValueError("one index array per input axis")
    strides = [int(np.prod(in_shape[k + 1:], dtype=np.int64)) * itemsize for k in range(len(in_shape))]
    tables = [np.asarray(p, np.int64) * s for p, s in zip(picks, strides)]
    base = sum(int(t[0]) for t in tables if t.size == 1)
    tables = [t for t in tables if t.size != 1]
    chunk = itemsize
    # Trailing axes copied whole and in order are one contiguous chunk.
    while tables:
        last = tables[-1]
        n = last.size
        if not np.array_equal(last, np.arange(n) * chunk):  # offsets 0, c, 2c, ..: one block
            break
        chunk *= n
        tables.pop()
    while len(tables) > MAX_DIMS:  # merge the adjacent pair with the smallest product
        k = min(range(len(tables) - 1), key=lambda i: tables[i].size * tables[i + 1].size)
        tables[k:k + 2] = [(tables[k][:, None] + tables[k + 1][None, :]).reshape(-1)]
    if not tables:
        tables = [np.zeros(1, np.int64)]
    tables[0] = tables[0] + base
    if int(max(t.max() for t in tables)) * len(tables) + chunk >= 2 ** 31:
        raise KilnError("tensor too large for 32-bit offsets")
    return [t.size for t in tables], tables, chunk


def lower_index_map(node: Node, ctx: Lowering, src: str, out: str, picks: Sequence[np.ndarray],
                    in_shape: Sequence[int] | None = None, part: str | None = None) -> None:
    """One `index_map` call writing `out` from `src` (viewed with `in_shape`, default its own);
    a view or a copy when the map moves nothing."""
    x = ctx.g.values[src]
    itemsize = np_dtype(x.dtype).itemsize
    dims, tables, chunk = index_map_plan(tuple(in_shape or x.shape), itemsize, picks)
    out_bytes = ctx.g.values[out].nbytes
    if part is None and dims == [1] and int(tables[0][0]) == 0 and chunk == out_bytes == x.nbytes:
        if not ctx.alias(out, src):
            emit_copy(node, ctx, src, out)
        return
    pad = MAX_DIMS - len(dims)
    starts, acc = [], 1  # entry 0 is the 0 that padded loops add
    for t in tables:
        starts.append(acc)
        acc += t.size
    table = ctx.constant(node, f"offsets{'_' + part if part else ''}", np.concatenate([[0], *tables]), "int32")
    ctx.request(KernelRequest("index_map", node, {"dims": (1,) * pad + tuple(dims), "start": (0,) * pad + tuple(starts),
                                                  "table": table, "chunk": chunk},
                              (ctx.tensor(src), ctx.tensor(out)), part=part))
