"""templates/kernels/reference/copy.c.j2: a byte copy of one tensor into another (a view that
cannot alias: Reshape, an identity Transpose or Cast, an index map that moves nothing)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class Copy:
    nbytes: int


typed_kernels(REFERENCE, Copy, "copy")
