"""templates/kernels/reference/{quantize_f32,dequantize_s8_f32}.c.j2: float32 <-> int8 with one
per-tensor scale and zero point (of the int8 side)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class AffineQuant:
    n: int  # elements
    scale: float  # the int8 side's quantization
    zero_point: int


typed_kernels(REFERENCE, AffineQuant, "quantize_f32", "dequantize_s8_f32")
