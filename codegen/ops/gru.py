"""GRU: gated recurrent unit layer over a fixed-length sequence (ONNX GRU); float32, ONNX's
gate order z, r, h. See recurrent for layouts and attributes.

    z = sigmoid(W_z x + R_z h + Wb_z + Rb_z)      r = sigmoid(W_r x + R_r h + Wb_r + Rb_r)
    n = tanh(W_h x + R_h (r * h) + Rb_h + Wb_h)          (linear_before_reset = 0)
    n = tanh(W_h x + r * (R_h h + Rb_h) + Wb_h)          (linear_before_reset = 1)
    h' = (1 - z) * n + z * h
"""

from __future__ import annotations

import numpy as np

from codegen.ops.recurrent import RecurrentOp, sigmoid
from codegen.ops.registry import register


@register
class GRU(RecurrentOp):
    name = "GRU"
    attributes = {**RecurrentOp.attributes, "linear_before_reset": False}
    arity = (3, 5)
    kernels = ("gru_f32",)
    gates = 3
    states = 1

    @classmethod
    def step(cls, node, x_t, h, c, w, r, b, p, clip):
        hs = h.size
        wb, rb = b[:3 * hs], b[3 * hs:]
        xw = (w @ x_t + wb).astype(np.float32)
        hr = (r[:2 * hs] @ h + rb[:2 * hs]).astype(np.float32)
        zr = xw[:2 * hs] + hr
        if clip > 0:
            zr = np.clip(zr, -clip, clip)
        z, rr = sigmoid(zr[:hs]), sigmoid(zr[hs:])
        if node.attrs["linear_before_reset"]:
            pre = xw[2 * hs:] + rr * (r[2 * hs:] @ h + rb[2 * hs:])
        else:
            pre = xw[2 * hs:] + r[2 * hs:] @ (rr * h) + rb[2 * hs:]
        if clip > 0:
            pre = np.clip(pre, -clip, clip)
        n = np.tanh(pre.astype(np.float32))
        return ((np.float32(1) - z) * n + z * h).astype(np.float32), c

    @classmethod
    def bias_param(cls, node, ctx, b, dirs, hidden):
        """GRU keeps Wb and Rb apart: Rb_h sits inside the reset gate's product."""
        return ctx.g.values[b].data if b else np.zeros((dirs, 6 * hidden), np.float32)

    @classmethod
    def extra_params(cls, node):
        return {"linear_before_reset": bool(node.attrs["linear_before_reset"])}
