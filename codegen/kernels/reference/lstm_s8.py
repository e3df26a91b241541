"""templates/kernels/reference/lstm_s8.c.j2: TFLite Micro's integer LSTM (codegen/ops/integer_lstm.py).
The op lays out the fields (TFLM's Prepare constants); the spec types them."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import TypedSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class LstmS8:
    seq: int
    batch: int
    input: int
    hidden: int
    w: ConstArray  # [4][hidden][input], gates input, forget, cell, output
    r: ConstArray  # [4][hidden][hidden]
    bias: ConstArray  # [4][hidden]
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


@kernel_spec
class LstmS8Reference(TypedSpec):
    kernel, variant, Params = "lstm_s8", "reference", LstmS8
