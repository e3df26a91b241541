"""templates/kernels/reference/signed_rescale_s16.c.j2: codegen/ops/signed_rescale.py (TFLM's
int16 ABS and LEAKY_RELU)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class SignedRescale:
    n: int  # elements
    input_zp: int
    output_zp: int
    pos_multiplier: int  # 0: v unchanged
    pos_shift: int
    neg_multiplier: int  # 0: v (or -v) unchanged
    neg_shift: int
    negate: int  # 1: a negative v is negated before its rescale (ABS)


typed_kernels(REFERENCE, SignedRescale, "signed_rescale_s16")
