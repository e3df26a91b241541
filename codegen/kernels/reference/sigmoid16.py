"""templates/kernels/reference/sigmoid16.c.j2: int16 LOGISTIC and TANH (kernels sigmoid_s16,
tanh_s16) with TFLM's input rescaling and its interpolated sigmoid table."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import kernel_family
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class Sigmoid16:
    n: int  # elements
    multiplier: int  # codegen.quant.sigmoid16.int16_input_rescale
    right_shift: int
    sigmoid_table: ConstArray  # [256] uint16: codegen.quant.sigmoid16.SIGMOID_TABLE_UINT16


kernel_family("sigmoid16", {"sigmoid_s16": {"function": "sigmoid_s16", "tanh": 0},
                            "tanh_s16": {"function": "tanh_s16", "tanh": 1}}, params=Sigmoid16,
              doc="int16 LOGISTIC and TANH from TFLM's 16-bit sigmoid table")
