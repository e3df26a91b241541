"""templates/kernels/reference/det_f32.c.j2: the determinant of each square matrix of the
batch, by Gaussian elimination with partial pivoting on a scratch copy of the matrix."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class DetF32:
    count: int  # matrices
    n: int  # rows = columns


typed_kernels(REFERENCE, DetF32, "det_f32")
