"""templates/kernels/reference/log_softmax_s8.c.j2: codegen/ops/quantized_log_softmax.py (TFLM's
int8 LOG_SOFTMAX, rows of the last axis)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class LogSoftmaxS8:
    outer: int  # rows
    depth: int  # row length (the last axis)
    input_multiplier: int  # codegen.quant.log_softmax_params (TFLM LogSoftmaxOpData)
    input_left_shift: int
    reverse_scaling_divisor: int
    reverse_scaling_right_shift: int
    diff_min: int


typed_kernels(REFERENCE, LogSoftmaxS8, "log_softmax_s8")
