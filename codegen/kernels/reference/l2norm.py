"""templates/kernels/reference/l2norm_s8.c.j2: codegen/ops/quantized_l2_normalization.py (TFLM's
int8 L2_NORMALIZATION, rows of the last axis)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class L2NormS8:
    outer: int  # rows
    depth: int  # row length (the last axis)
    input_zp: int


typed_kernels(REFERENCE, L2NormS8, "l2norm_s8")
