"""Recurrent layers over a fixed-length sequence (LSTM, GRU, RNN): the shared part. float32.

Tensors use ONNX's layout 0: x [seq, batch, input], weights w [dirs, G*H, input] and
r [dirs, G*H, H] (G gates per cell, rows in ONNX's gate order), bias [dirs, 2*G*H] (Wb then
Rb), initial state [dirs, batch, H]; outputs y [seq, dirs, batch, H] and the last state
y_h (and y_c for LSTM) [dirs, batch, H]. `direction` is forward, reverse or bidirectional.
`seq_lens` (one per batch entry; empty = all `seq`) ends a sequence early: its later steps
output zeros and the last state is the one at its own end, as ONNX's sequence_lens input.
Weights, bias and peepholes are constants; the initial state may be computed. ONNX's
default activations only (sigmoid and tanh; tanh for RNN); `clip` > 0 clamps the gates'
pre-activations.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.errors import KilnError
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.ops.registry import Op, OpKind

DIRECTIONS = ("forward", "reverse", "bidirectional")


def sigmoid(v: np.ndarray) -> np.ndarray:
    return np.float32(1) / (np.float32(1) + np.exp(-v))


class RecurrentOp(Op):
    kind = OpKind.OPAQUE
    attributes = {"hidden_size": 1, "direction": "forward", "clip": 0.0, "seq_lens": ()}
    gates: ClassVar[int]
    states: ClassVar[int]  # 2 for LSTM (h and c), else 1
    # input positions: x, w, r, b, initial_h[, initial_c, p]

    @classmethod
    def dims(cls, node, ins) -> tuple[int, int, int, int, int]:
        """(seq, batch, input, hidden, dirs), checking every shape against them."""
        x, w, r = ins[0], ins[1], ins[2]
        if node.attrs["direction"] not in DIRECTIONS:
            raise KilnError(f"{node.op} direction '{node.attrs['direction']}' is not one of "
                            f"{', '.join(DIRECTIONS)}", node=node.name)
        dirs = 2 if node.attrs["direction"] == "bidirectional" else 1
        hidden = int(node.attrs["hidden_size"])
        if len(x.shape) != 3:
            raise KilnError(f"{node.op} input must be [seq, batch, input], got {list(x.shape)}", node=node.name)
        seq, batch, inp = x.shape
        g = cls.gates * hidden
        expect = {1: (dirs, g, inp), 2: (dirs, g, hidden), 3: (dirs, 2 * g), 4: (dirs, batch, hidden),
                  5: (dirs, batch, hidden), 6: (dirs, 3 * hidden)}
        for k, v in enumerate(ins[1:], start=1):
            if v is not None and tuple(v.shape) != expect[k]:
                raise KilnError(f"{node.op} input {k} is {list(v.shape)}, expected {list(expect[k])}", node=node.name)
        lens = tuple(int(v) for v in node.attrs["seq_lens"])
        if lens and (len(lens) != batch or any(not 1 <= v <= seq for v in lens)):
            raise KilnError(f"{node.op} seq_lens {list(lens)} must give 1..{seq} for each of {batch}", node=node.name)
        return seq, batch, inp, hidden, dirs

    @classmethod
    def infer(cls, node, ins):
        seq, batch, _, hidden, dirs = cls.dims(node, ins)
        state = ("float32", (dirs, batch, hidden))
        return [("float32", (seq, dirs, batch, hidden))] + [state] * cls.states

    @classmethod
    def check(cls, node, g):
        for k, name in enumerate(node.inputs):
            if name and g.values[name].dtype != "float32":
                raise KilnError(f"{node.op} on {g.values[name].dtype} is not supported (float32 only)", node=node.name)
            if name and k in (1, 2, 3, 6) and not g.values[name].is_const:
                raise KilnError(f"{node.op} weights and bias ('{name}') must be constants", node=node.name)

    @classmethod
    def step(cls, node, x_t, h, c, w, r, b, p, clip):
        """One cell update for one batch row: (new h, new c)."""
        raise NotImplementedError

    @classmethod
    def gate_inputs(cls, x_t, h, w, r, b, clip):
        """W x + R h + Wb + Rb of all gates at once (float32), clamped to [-clip, clip] if clip > 0:
        the pre-activation of the cells whose gates all read h directly (LSTM, RNN)."""
        g = cls.gates * h.size
        pre = (w @ x_t + r @ h + b[:g] + b[g:]).astype(np.float32)
        return np.clip(pre, -clip, clip) if clip > 0 else pre

    @classmethod
    def reference(cls, node, args, g):
        args = list(args) + [None] * (7 - len(args))
        x = args[0]
        seq, batch, _, hidden, dirs = cls.dims(node, [g.values[n] if n else None for n in node.inputs])
        lens = [int(v) for v in node.attrs["seq_lens"]] or [seq] * batch
        clip = float(node.attrs["clip"])
        y = np.zeros((seq, dirs, batch, hidden), np.float32)
        states = [np.zeros((dirs, batch, hidden), np.float32) for _ in range(cls.states)]
        for d in range(dirs):
            rev = d == 1 or node.attrs["direction"] == "reverse"
            b = args[3][d] if args[3] is not None else np.zeros(2 * cls.gates * hidden, np.float32)
            p = args[6][d] if cls.states == 2 and args[6] is not None else np.zeros(3 * hidden, np.float32)
            for n in range(batch):
                h = args[4][d, n] if args[4] is not None else np.zeros(hidden, np.float32)
                c = args[5][d, n] if cls.states == 2 and args[5] is not None else np.zeros(hidden, np.float32)
                for step in range(lens[n]):
                    t = lens[n] - 1 - step if rev else step
                    h, c = cls.step(node, x[t, n], h, c, args[1][d], args[2][d], b, p, clip)
                    y[t, d, n] = h
                states[0][d, n] = h
                if cls.states == 2:
                    states[1][d, n] = c
        return [y] + states

    @classmethod
    def bias_param(cls, node, ctx, b, dirs: int, hidden: int) -> np.ndarray:
        """The bias array the kernel reads (LSTM and RNN add Wb and Rb at compile time)."""
        g = cls.gates * hidden
        data = ctx.g.values[b].data if b else np.zeros((dirs, 2 * g), np.float32)
        return (data[:, :g] + data[:, g:]).astype(np.float32)

    @classmethod
    def extra_params(cls, node) -> dict:
        return {}

    @classmethod
    def lower(cls, node, ctx):
        gv = ctx.g.values
        ins = list(node.inputs) + [""] * (7 - len(node.inputs))
        seq, batch, inp, hidden, dirs = cls.dims(node, [gv[n] if n else None for n in node.inputs])
        lens = [int(v) for v in node.attrs["seq_lens"]] or [seq] * batch
        params = {"seq": seq, "batch": batch, "input": inp, "hidden": hidden, "dirs": dirs,
                  "reverse": node.attrs["direction"] == "reverse", "clip": float(node.attrs["clip"]),
                  "w": ctx.tensor(ins[1]), "r": ctx.tensor(ins[2]),
                  "bias": ctx.constant(node, "bias", cls.bias_param(node, ctx, ins[3], dirs, hidden), "float32"),
                  "lens": ctx.constant(node, "lens", np.array(lens), "int32"), **cls.extra_params(node)}
        zeros = ctx.constant(node, "zero_state", np.zeros(dirs * batch * hidden), "float32") \
            if not ins[4] or (cls.states == 2 and not ins[5]) else None
        args = [ctx.tensor(ins[0]), ctx.tensor(ins[4]) if ins[4] else zeros]
        if cls.states == 2:
            args.append(ctx.tensor(ins[5]) if ins[5] else zeros)
            peep = gv[ins[6]].data if ins[6] else np.zeros((dirs, 3 * hidden), np.float32)
            params["peephole"] = ctx.constant(node, "peephole", peep, "float32")
        args += [ctx.tensor(o) for o in node.outputs]
        args.append(ScratchArg(4 * 2 * cls.gates * hidden))
        ctx.request(KernelRequest(cls.kernels[0], node, params, tuple(args), ("math.h",)))
