"""templates/kernels/reference/index_map.c.j2: a data movement whose source offsets are known at
compile time (Slice, Tile, Expand, Gather with constant indices, nearest Resize...): per output
loop a table of input byte offsets, summed, then a contiguous chunk copied."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class IndexMap:
    dims: tuple[int, ...]  # output loop extents, outermost first (left-padded with 1)
    start: tuple[int, ...]  # where each loop's entries begin in `table` (entry 0 is 0: padded loops)
    table: ConstArray  # per loop and index: input byte offset it adds
    chunk: int  # contiguous bytes copied per innermost step


typed_kernels(REFERENCE, IndexMap, "index_map")
