"""templates/kernels/reference/hybrid_lstm_f32.c.j2: LiteRT's hybrid LSTM (float activations
and state, int8 gate matrices quantizing x and h at each step; codegen/ops/hybrid_lstm.py),
on the LSTM's fields (reference/recurrent_f32.py) with the matrices int8."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.reference.recurrent_f32 import Lstm
from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class HybridLstm(Lstm):
    asymmetric: bool  # x and h quantized with a zero point (asymmetric_quantize_inputs)
    scales: ConstArray  # [2][4]: per gate (i, o, f, c) the input matrix's scale, then the recurrent one's


typed_kernels(REFERENCE, HybridLstm, "hybrid_lstm_f32")
