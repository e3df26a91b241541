"""LSTM: long short-term memory layer over a fixed-length sequence (ONNX LSTM, TFLite
UNIDIRECTIONAL_SEQUENCE_LSTM); float32, ONNX's gate order i, o, f, c and optional peepholes
p = (pi, po, pf). See recurrent for layouts and attributes.

    i = sigmoid(W_i x + R_i h + b_i + pi * c)     f = sigmoid(W_f x + R_f h + b_f + pf * c)
    g = tanh(W_c x + R_c h + b_c)                  c' = f * c + i * g
    o = sigmoid(W_o x + R_o h + b_o + po * c')     h' = o * tanh(c')
"""

from __future__ import annotations

import numpy as np

from codegen.ops.recurrent import RecurrentOp, sigmoid
from codegen.ops.registry import register


@register
class LSTM(RecurrentOp):
    name = "LSTM"
    arity = (3, 7)
    kernels = ("lstm_f32",)
    gates = 4
    states = 2

    @classmethod
    def step(cls, node, x_t, h, c, w, r, b, p, clip):
        hs = h.size
        pre = cls.gate_inputs(x_t, h, w, r, b, clip)
        i = sigmoid(pre[:hs] + p[:hs] * c)
        f = sigmoid(pre[2 * hs:3 * hs] + p[2 * hs:] * c)
        c_new = (f * c + i * np.tanh(pre[3 * hs:])).astype(np.float32)
        o = sigmoid(pre[hs:2 * hs] + p[hs:2 * hs] * c_new)
        return (o * np.tanh(c_new)).astype(np.float32), c_new
