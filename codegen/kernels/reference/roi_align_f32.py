"""templates/kernels/reference/roi_align_f32.c.j2: RoiAlign: bilinear samples averaged (or maxed) per output bin."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class RoiAlignF32:
    rois: int
    batch: int
    channels: int
    height: int
    width: int
    out_h: int
    out_w: int
    sampling_ratio: int  # samples per bin and axis; 0: ceil(roi size / output size) per ROI
    spatial_scale: float
    offset: float  # 0.5 for half_pixel, 0 for output_half_pixel
    max_mode: bool  # max of the samples (else their average)


typed_kernels(REFERENCE, RoiAlignF32, "roi_align_f32")
