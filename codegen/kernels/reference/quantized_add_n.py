"""templates/kernels/reference/add_n_s8.c.j2: codegen/ops/quantized_add_n.py (TFLM's int8
ADD_N), one kernel per input count (its inputs are separate arguments)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import kernel_family
from codegen.ops.quantized_add_n import MAX_INPUTS, kernel_name


@dataclass(frozen=True)
class QuantizedAddN:
    n: int  # elements
    input_zp: int  # shared by every input
    output_zp: int
    multiplier: int  # TFLM's 2 * input scale / (2**20 * output scale)
    shift: int


kernel_family("add_n_s8", {kernel_name(k): {"function": kernel_name(k), "count": k} for k in range(2, MAX_INPUTS + 1)},
              params=QuantizedAddN, doc="int8 ADD_N as TFLite Micro's reference_ops::AddN")
