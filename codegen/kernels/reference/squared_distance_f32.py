"""templates/kernels/reference/squared_distance_f32.c.j2: the squared Euclidean distance of every row of x to every row of v."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class SquaredDistanceF32:
    rows: int  # N: rows of x
    vectors: int  # V: rows of v
    features: int  # F: elements per row


typed_kernels(REFERENCE, SquaredDistanceF32, "squared_distance_f32")
