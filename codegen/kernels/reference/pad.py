"""templates/kernels/reference/pad.c.j2: constant padding (pad_f32, pad_s8), one family over
the element type: fill the output with the value, then copy each innermost input row."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import kernel_family


@dataclass(frozen=True)
class Pad:
    out_size: int  # elements of the output
    in_dims: tuple[int, ...]  # input extents, outermost first (coalesced, left-padded with 1)
    out_strides: tuple[int, ...]  # output element stride of each input dimension
    out_offset: int  # output index of the first input element
    value: int | float  # the pad value (int8: quantized to the output)


kernel_family("pad", {"pad_f32": {"stem": "pad_f32", "ctype": "float"}, "pad_s8": {"stem": "pad_s8", "ctype": "int8_t"}},
              params=Pad)
