"""templates/kernels/reference/cumsum_s8.c.j2: codegen/ops/quantized_cumsum.py (TFLM's int8
CUMSUM)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class CumSumS8:
    outer: int  # product of the dimensions before the axis
    depth: int  # the axis
    inner: int  # product of the dimensions after it
    exclusive: bool  # each result leaves its own element out
    reverse: bool  # run from the end of the axis
    input_offset: int  # codegen.quant.cumsum_params (TFLM's OpData)
    input_multiplier: int
    input_shift: int
    output_offset: int
    output_multiplier: int
    output_shift: int


typed_kernels(REFERENCE, CumSumS8, "cumsum_s8")
