"""RNN: simple recurrent layer over a fixed-length sequence (ONNX RNN, TFLite
UNIDIRECTIONAL_SEQUENCE_RNN), h' = tanh(W x + R h + Wb + Rb); float32. See recurrent for
layouts and attributes."""

from __future__ import annotations

import numpy as np

from codegen.ops.recurrent import RecurrentOp
from codegen.ops.registry import register


@register
class RNN(RecurrentOp):
    name = "RNN"
    arity = (3, 5)
    kernels = ("rnn_f32",)
    gates = 1
    states = 1

    @classmethod
    def step(cls, node, x_t, h, c, w, r, b, p, clip):
        pre = cls.gate_inputs(x_t, h, w, r, b, clip)
        return np.tanh(pre).astype(np.float32), c
