"""templates/kernels/reference/lstm_quantized.c.j2: TFLite Micro's integer LSTM, 8- and 16-bit
activations (kernels lstm_s8, lstm_s16; codegen/ops/integer_lstm.py). The op lays out the fields
(TFLM's Prepare constants); the family types them."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import kernel_family
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class LstmQuantized:
    seq: int
    batch: int
    input: int
    hidden: int
    w: ConstArray  # [4][hidden][input], gates input, forget, cell, output
    r: ConstArray  # [4][hidden][hidden]
    bias: ConstArray  # [4][hidden] int32 (int64 with 16-bit activations)
    sigmoid_table: ConstArray  # [256] uint16 (codegen/quant/sigmoid16.py)
    steps: ConstArray  # [1] int32: the steps run (seq, or set at run time for a bounded time axis)
    input_offset: int
    hidden_offset: int
    hidden_zero_point: int
    input_multiplier: tuple[int, ...]  # per gate
    input_shift: tuple[int, ...]
    recurrent_multiplier: tuple[int, ...]
    recurrent_shift: tuple[int, ...]
    forget_multiplier: int
    forget_shift: int
    update_multiplier: int
    update_shift: int
    hidden_multiplier: int
    hidden_shift: int
    tanh_multiplier: int
    tanh_right_shift: int
    cell_clip: int


kernel_family("lstm_quantized", {
    "lstm_s8": {"function": "lstm_s8", "T": "int8_t", "B": "int32_t", "fc_stage": "kiln_mbqm", "sat": "kiln_sat_s8"},
    "lstm_s16": {"function": "lstm_s16", "T": "int16_t", "B": "int64_t", "fc_stage": "kiln_mbqm_s64",
                 "sat": "kiln_sat_s16"}}, params=LstmQuantized, doc="TFLite Micro's integer LSTM, int8 and int16 activations")
