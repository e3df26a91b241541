"""Recurrent layers: LSTM, GRU and RNN with ONNX's default activations.

Weights, bias, peepholes and sequence_lens must be constants; the initial state may be
computed. `layout=1` (batch first) is transposed to Kiln's layout 0 around the node.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import converter
from codegen.frontends.onnx.ops_shape import add_multi

DEFAULT_ACTIVATIONS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"], "RNN": ["tanh"]}


@converter("LSTM", "GRU", "RNN")
def convert_recurrent(ctx, node):
    op = node.op_type
    direction = node.attr("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    acts = node.attr("activations")
    if acts is not None and [a.lower() for a in acts] != DEFAULT_ACTIVATIONS[op] * dirs:
        raise node.error(f"activations {acts} are not supported (only the defaults "
                         f"{DEFAULT_ACTIVATIONS[op]})")
    if node.attr("activation_alpha") is not None or node.attr("activation_beta") is not None:
        raise node.error("activation_alpha/activation_beta are not supported")
    if node.attr("input_forget", 0):
        raise node.error("input_forget=1 is not supported")
    batch_first = bool(node.attr("layout", 0))
    for i in (1, 2, 3, 7):
        if node.input(i) and ctx.const(node.input(i)) is None:
            raise node.error(f"input {i} ('{node.input(i)}') must be a constant")
    x = ctx.kiln(node.input(0))
    if batch_first:
        x = ctx.add(node, "Transpose", [x], role="seq_first", perm=(1, 0, 2))
    seq, batch = ctx.b.g.values[x].shape[:2]
    lens = ()
    if node.input(4):
        data = ctx.require_const(node, 4, "sequence_lens").reshape(-1)
        lens = () if np.all(data == seq) else tuple(int(v) for v in data)
    states = [node.input(5)] + ([node.input(6)] if op == "LSTM" else [])
    ins = [x, ctx.kiln(node.input(1)), ctx.kiln(node.input(2)), ctx.kiln(node.input(3)) if node.input(3) else ""]
    for k, s in enumerate(states):
        v = ctx.kiln(s) if s else ""
        if s and batch_first:
            v = ctx.add(node, "Transpose", [v], role=f"state{k}_dirs_first", perm=(1, 0, 2))
        ins.append(v)
    if op == "LSTM":
        ins.append(ctx.kiln(node.input(7)) if node.input(7) else "")
    while ins[-1] == "":
        ins.pop()
    attrs = {"hidden_size": int(node.attr("hidden_size")), "direction": direction,
             "clip": float(node.attr("clip", 0.0)), "seq_lens": lens}
    if op == "GRU":
        attrs["linear_before_reset"] = bool(node.attr("linear_before_reset", 0))
    n_out = 3 if op == "LSTM" else 2
    outs = [node.outputs[k] if k < len(node.outputs) else "" for k in range(n_out)]
    if not batch_first:
        add_multi(ctx, node, op, ins, outs, **attrs)
        return
    values = add_multi(ctx, node, op, ins, [""] * n_out, **attrs)
    for k, (out, v) in enumerate(zip(outs, values)):
        if out:
            ctx.add(node, "Transpose", [v], role=f"out{k}_batch_first", out=out,
                    perm=(2, 0, 1, 3) if k == 0 else (1, 0, 2))
