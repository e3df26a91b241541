"""templates/kernels/reference/take.c.j2: elements gathered by byte offsets known at compile time (a table in
flash), in bytes whatever the dtype; -1 writes zero."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class Take:
    n: int  # output elements
    elem: int  # bytes per element
    table: ConstArray  # byte offset of each output element in the data, -1: zero


typed_kernels(REFERENCE, Take, "take")
