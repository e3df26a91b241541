"""templates/kernels/reference/layer_norm_f32.c.j2: LayerNormalization and RMSNormalization over
the trailing axes, row by row."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class LayerNormF32:
    rows: int  # independent rows (product of the axes before the normalised ones)
    cols: int  # elements normalised together
    epsilon: float
    rms: bool  # RMSNorm (no mean subtracted), else LayerNorm


typed_kernels(REFERENCE, LayerNormF32, "layer_norm_f32")
