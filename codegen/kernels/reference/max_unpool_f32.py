"""templates/kernels/reference/max_unpool_f32.c.j2: MaxUnpool: each value placed at its index in a zeroed output."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class MaxUnpoolF32:
    n: int  # values to place
    size: int  # output elements


typed_kernels(REFERENCE, MaxUnpoolF32, "max_unpool_f32")
