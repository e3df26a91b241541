"""templates/kernels/reference/transpose.c.j2: a permutation of the axes as nested loops over
the output, in bytes whatever the dtype (codegen/ops/transpose.py transpose_plan)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class Transpose:
    dims: tuple[int, ...]  # loop extents in output order, outermost first (left-padded with 1)
    in_strides: tuple[int, ...]  # input bytes advanced per step of each loop
    chunk: int  # contiguous bytes copied per innermost step


typed_kernels(REFERENCE, Transpose, "transpose")
