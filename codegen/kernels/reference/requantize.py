"""templates/kernels/reference/requantize.c.j2: TFLM's Requantize between integer types, one
kernel per (input, output) type pair of codegen/ops/requantize.py."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.ir.types import C_TYPES
from codegen.kernels.spec import kernel_family
from codegen.ops.requantize import PAIRS, kernel_name

# The output type's saturation bounds, as C expressions (INT32_MIN has no literal).
_BOUNDS = {"int8": ("-128", "127"), "uint8": ("0", "255"), "int16": ("-32768", "32767"),
           "int32": ("KILN_INT32_MIN", "KILN_INT32_MAX")}


@dataclass(frozen=True)
class Requantize:
    n: int  # elements
    input_zp: int
    output_zp: int
    multiplier: int  # TFLM's QuantizeMultiplier(s_in / s_out)
    shift: int


kernel_family("requantize", {kernel_name(a, b): {"function": kernel_name(a, b), "in_t": C_TYPES[a],
                                                 "out_t": C_TYPES[b], "lo": _BOUNDS[b][0], "hi": _BOUNDS[b][1]}
                             for a, b in PAIRS}, params=Requantize)
