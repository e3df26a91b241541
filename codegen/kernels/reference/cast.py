"""templates/kernels/reference/cast.c.j2: every element converted from one type code to another
(codegen/ops/cast.py TYPE_CODES)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class Cast:
    n: int  # elements
    from_: int  # element type codes; C `from` (a Python keyword)
    to: int
    saturate: bool  # float8 targets: out-of-range values clamp (else NaN / inf)
    round_mode: int  # of a float8e8m0 target: 0 up, 1 down, 2 nearest


typed_kernels(REFERENCE, Cast, "cast", headers=("kiln_float.h",))
