"""templates/kernels/reference/resize_bilinear_s8.c.j2: TFLite Micro's int8 bilinear resize
(ResizeBilinearInteger) from per-row and per-column taps computed at compile time."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class ResizeBilinearS8:
    batches: int
    in_h: int
    in_w: int
    channels: int
    out_h: int
    out_w: int
    y0: ConstArray  # per output row: lower source row
    y1: ConstArray  # upper source row
    wy: ConstArray  # weight of the upper row in 1/1024 (the lower one has 1024 - wy)
    x0: ConstArray  # the same per output column
    x1: ConstArray
    wx: ConstArray


typed_kernels(REFERENCE, ResizeBilinearS8, "resize_bilinear_s8")
