"""templates/kernels/reference/grid_sample_f32.c.j2: GridSample over 2-D or 3-D images (NCHW / NCDHW)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class GridSampleF32:
    batches: int
    channels: int
    dims: tuple[int, ...]  # image depth, height, width (depth 1 for 2-D images)
    out: tuple[int, ...]  # output depth, height, width
    coords: int  # values per grid point: 2 (x, y) or 3 (x, y, z)
    mode: int  # 0 nearest, 1 linear, 2 cubic
    padding: int  # 0 zeros, 1 border, 2 reflection
    align_corners: bool


typed_kernels(REFERENCE, GridSampleF32, "grid_sample_f32")
