"""templates/kernels/reference/arg_reduce_f32.c.j2: ArgMax / ArgMin of float32 along one axis,
walked as [outer, depth, inner]."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class ArgReduceF32:
    outer: int  # product of the dimensions before the axis
    depth: int  # the reduced axis
    inner: int  # product of the dimensions after it
    is_max: bool  # ArgMax (else ArgMin)
    last: bool  # the last extreme index wins (else the first)


typed_kernels(REFERENCE, ArgReduceF32, "arg_reduce_f32")
