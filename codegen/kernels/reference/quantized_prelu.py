"""templates/kernels/reference/prelu_quantized.c.j2: codegen/ops/quantized_prelu.py (TFLM's
int8 and int16 PRELU)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import kernel_family
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class QuantizedPRelu:
    n: int  # elements
    channels: int  # alphas: the last axis, or 1
    input_zp: int
    output_zp: int
    pos_multiplier: int
    pos_shift: int
    neg_multiplier: int
    neg_shift: int
    alpha: ConstArray  # [channels] int32: stored alpha minus its zero point


kernel_family("prelu_quantized", {"prelu_s8": {"function": "prelu_s8", "ctype": "int8_t", "lo": -128, "hi": 127},
                                  "prelu_s16": {"function": "prelu_s16", "ctype": "int16_t", "lo": -32768, "hi": 32767}},
              params=QuantizedPRelu, doc="int8 and int16 PRELU as TFLite Micro's BroadcastPrelu4DSlow")
