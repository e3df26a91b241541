"""templates/kernels/reference/conv_transpose2d_quantized.c.j2: TFLite Micro's int8 and 16x8
TRANSPOSE_CONV (kernels conv_transpose2d_s8, conv_transpose2d_s16; codegen/ops/conv_transpose2d.py
lays out the fields and the arguments: input, weights, bias as stored, output)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import ConvShape, OutputStage
from codegen.kernels.spec import kernel_family
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class ConvTransposeQuantized(ConvShape, OutputStage):
    input_offset: int  # -zero point of the input (0 for int16)
    multiplier: ConstArray  # int32 per output channel: TFLM's quantized multiplier and shift
    shift: ConstArray


kernel_family("conv_transpose2d_quantized", {
    "conv_transpose2d_s8": {"function": "conv_transpose2d_s8", "T": "int8_t", "A": "int32_t",
                            "requant": "kiln_requant_s8"},
    "conv_transpose2d_s16": {"function": "conv_transpose2d_s16", "T": "int16_t", "A": "int64_t",
                             "requant": "kiln_requant_s16"}},
    params=ConvTransposeQuantized, doc="TFLite Micro's int8 and 16x8 TRANSPOSE_CONV, gathered per output")
