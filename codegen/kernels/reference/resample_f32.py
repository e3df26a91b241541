"""templates/kernels/reference/resample_f32.c.j2: Resize (linear, cubic; nearest that is not an
index map) as separable taps per output loop, index and weight tables in flash."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class ResampleF32:
    dims: tuple[int, ...]  # output loop extents, outermost first (left-padded with 1)
    taps: tuple[int, ...]  # input samples combined per output index of each loop
    start: tuple[int, ...]  # where each loop's rows (taps entries per output index) begin
    index: ConstArray  # input element offset of each tap; -1: outside the crop
    weight: ConstArray  # weight of each tap
    extrapolation: float  # output where a sample lies outside the crop


typed_kernels(REFERENCE, ResampleF32, "resample_f32")
