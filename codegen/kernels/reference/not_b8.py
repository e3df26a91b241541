"""templates/kernels/reference/not_b8.c.j2: logical Not over a bool tensor."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class NotB8:
    n: int  # elements


typed_kernels(REFERENCE, NotB8, "not_b8")
