"""templates/kernels/reference/unary_lut_s8.c.j2: an int8 -> int8 function of the input byte
(Clip, Relu and their family, Sigmoid, Tanh, int8 requantizing Quantize) as a 256-entry table
tabulated at compile time from the bit-exact numpy emulation."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class UnaryLutS8:
    n: int  # elements
    table: ConstArray  # 256 entries, indexed by the input byte read as uint8


typed_kernels(REFERENCE, UnaryLutS8, "unary_lut_s8")
