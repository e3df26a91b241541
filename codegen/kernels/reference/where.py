"""templates/kernels/reference/where.c.j2: Where with numpy broadcasting over up to four
coalesced loops, moving bytes whatever the dtype."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class Where:
    dims: tuple[int, ...]  # loop extents, outermost first (coalesced, left-padded with 1)
    c_strides: tuple[int, ...]  # element stride of cond, x and y per loop dimension, 0 = broadcast
    x_strides: tuple[int, ...]
    y_strides: tuple[int, ...]
    elem: int  # bytes per element of x, y and the output


typed_kernels(REFERENCE, Where, "where")
