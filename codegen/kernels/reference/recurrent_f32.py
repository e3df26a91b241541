"""templates/kernels/reference/{rnn,gru,lstm}_f32.c.j2: ONNX's float32 recurrent layers
(codegen/ops/recurrent.py), their common fields templates/kernels/reference/_recurrent.c.j2."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class Recurrent:
    seq: int  # time steps, batch entries, input features, hidden units, directions
    batch: int
    input: int
    hidden: int
    dirs: int
    reverse: bool  # one direction, run backwards
    clip: float  # > 0: gate pre-activations clamped to [-clip, clip]
    w: ConstArray  # [dirs][gates * hidden][input]
    r: ConstArray  # [dirs][gates * hidden][hidden]
    bias: ConstArray  # per direction
    lens: ConstArray  # [batch] steps of each sequence


@dataclass(frozen=True)
class Gru(Recurrent):
    linear_before_reset: bool


@dataclass(frozen=True)
class Lstm(Recurrent):
    peephole: ConstArray  # [dirs][3 * hidden]: i, o, f


typed_kernels(REFERENCE, Recurrent, "rnn_f32")
typed_kernels(REFERENCE, Gru, "gru_f32")
typed_kernels(REFERENCE, Lstm, "lstm_f32")
