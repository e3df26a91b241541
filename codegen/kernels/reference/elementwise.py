"""The fixed elementwise reference kernels over a flat tensor: not_b8, sigmoid_f32, tanh_f32,
bitwise_not_u{8,16,32,64} (templates/kernels/reference/<kernel>.c.j2, their block the element
count) and clip_f32 (with its bounds)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class Elements:
    n: int  # elements


@dataclass(frozen=True)
class ClipF32(Elements):
    min: float
    max: float


typed_kernels(REFERENCE, Elements, "not_b8", "sigmoid_f32", "tanh_f32",
              *(f"bitwise_not_u{bits}" for bits in (8, 16, 32, 64)))
typed_kernels(REFERENCE, ClipF32, "clip_f32")
