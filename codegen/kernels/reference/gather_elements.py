"""templates/kernels/reference/gather_elements.c.j2: GatherElements, each output element read
at its base offset plus its index along the axis, in bytes whatever the dtype."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class GatherElements:
    n: int  # output elements (= indices)
    dim: int  # size of the gathered axis
    axis_stride: int  # bytes between neighbours along the axis
    elem: int  # bytes per element
    wide_indices: bool  # int64 indices (else int32)
    base: ConstArray  # per output element: its data byte offset without the axis part


typed_kernels(REFERENCE, GatherElements, "gather_elements")
