"""templates/kernels/reference/scatter_reduce_f32.c.j2: ScatterElements with a reduction, the target offsets known at
compile time."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class ScatterReduceF32:
    n: int  # data elements
    count: int  # updates
    reduction: int  # 0 add, 1 mul, 2 max, 3 min
    offsets: ConstArray  # target element of each update, -1: dropped


typed_kernels(REFERENCE, ScatterReduceF32, "scatter_reduce_f32")
