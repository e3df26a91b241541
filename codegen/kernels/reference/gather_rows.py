"""templates/kernels/reference/gather_rows.c.j2: Gather with run-time indices, whole rows of
bytes along one axis (constant indices lower to an index map instead)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class GatherRows:
    outer: int  # product of the data dimensions before the axis
    dim: int  # size of the gathered axis
    row_bytes: int  # bytes of one entry of the axis (everything after it)
    count: int  # number of indices
    wide_indices: bool  # int64 indices (else int32)


typed_kernels(REFERENCE, GatherRows, "gather_rows")
