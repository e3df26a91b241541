"""templates/kernels/reference/matmul_f32.c.j2: float32 MatMul over broadcast batch loops."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class MatmulF32:
    dims: tuple[int, ...]  # batch loop extents, outermost first (coalesced, left-padded with 1)
    a_strides: tuple[int, ...]  # element stride of a per batch dimension, 0 = broadcast
    b_strides: tuple[int, ...]
    m: int  # out[.., m, n] = sum over k of a[.., m, k] * b[.., k, n]
    k: int
    n: int


typed_kernels(REFERENCE, MatmulF32, "matmul_f32")
