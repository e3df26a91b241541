"""IntegerLSTM: TFLite Micro's integer LSTM (8-bit activations and weights, 16-bit cell state,
32-bit biases; TFLite UNIDIRECTIONAL_SEQUENCE_LSTM on int8), step by step as TFLM runs it; and
its 16-bit-activation form (int16 input and hidden state, int8 weights, 64-bit biases: TFLM's
EvalLstm<int16_t, int8_t, int16_t, int64_t>).

Inputs: x [seq, batch, input] int8 / int16, w [4, hidden, input] and r [4, hidden, hidden] int8
(gates in TFLite's order input, forget, cell, output), bias [4, hidden] int32 / int64, h0 [batch,
hidden] of x's type, c0 [batch, hidden] int16 (power-of-two scale). Outputs: y [seq, batch,
hidden] of x's type (the hidden state after each step), the last h and c.

Each gate is two fully connected layers (x with its bias, h without) requantized to int16 at
scale 2^-12 and added with saturation, then TFLM's 16-bit sigmoid (tanh for the cell gate,
codegen/quant/sigmoid16.py); c' = f * c + i * g and h' = tanh(c') * o are TFLM's int16
multiplications with their own multipliers. The 16-bit form differs only in its fully connected
layers (int64 sums, TFLM's int64 MultiplyByQuantizedMultiplier) and in h' saturating to int16.
No peepholes, projection or layer norm (TFLM's integer kernel has none).
"""

from __future__ import annotations

import math

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier as mbqm
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier_s64 as mbqm_s64
from codegen.quant.params import fully_connected_output_multiplier, quantize_multiplier
from codegen.quant.sigmoid16 import SIGMOID_TABLE_UINT16, sigmoid_int16, tanh_int16

GATE_SCALE = 2.0 ** -12  # FC outputs: Q3.12, the sigmoid / tanh input
NONLINEAR_OUTPUT_SCALE = 2.0 ** -15  # TFLM Prepare's nonlinear_output_scale: 0.000030517578125, exactly
# The input types by activation type: x, w, r, bias, h0, c0.
TYPES = {"int8": ("int8", "int8", "int8", "int32", "int8", "int16"),
         "int16": ("int16", "int8", "int8", "int64", "int16", "int16")}
_HIDDEN_RANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}


@register
class IntegerLSTM(Op):
    name = "IntegerLSTM"
    kind = OpKind.OPAQUE
    attributes = {"cell_clip": 0.0}
    arity = (6, 6)
    kernels = ("lstm_s8", "lstm_s16")

    @classmethod
    def dims(cls, node, ins) -> tuple[int, int, int, int]:
        x, w, r, b, h0, c0 = ins
        if len(x.shape) != 3 or len(w.shape) != 3:
            raise KilnError(f"IntegerLSTM input {list(x.shape)} / weights {list(w.shape)} must have rank 3",
                            node=node.name)
        seq, batch, inp = x.shape
        hidden = w.shape[1]
        want = {"w": (4, hidden, inp), "r": (4, hidden, hidden), "bias": (4, hidden), "h0": (batch, hidden),
                "c0": (batch, hidden)}
        for (what, shape), v in zip(want.items(), (w, r, b, h0, c0)):
            if tuple(v.shape) != shape:
                raise KilnError(f"IntegerLSTM {what} is {list(v.shape)}, expected {list(shape)}", node=node.name)
        return seq, batch, inp, hidden

    @classmethod
    def infer(cls, node, ins):
        seq, batch, _, hidden = cls.dims(node, ins)
        act = ins[0].dtype
        return [(act, (seq, batch, hidden)), (act, (batch, hidden)), ("int16", (batch, hidden))]

    @classmethod
    def check(cls, node, g):
        ins = [g.values[n] for n in node.inputs]
        if tuple(v.dtype for v in ins) not in TYPES.values():
            raise KilnError("IntegerLSTM takes int8 input, weights and hidden state, int32 bias and int16 cell "
                            "state (or int16 input and hidden state, int8 weights, int64 bias and int16 cell state), "
                            f"got {', '.join(v.dtype for v in ins)}", node=node.name)
        for v in [ins[0], ins[4], ins[5]]:
            if v.quant is None or v.quant.per_channel:
                raise KilnError(f"IntegerLSTM '{v.name}' needs one quantization scale", node=node.name)
        for v in ins[1:3]:  # one scale, or one per gate
            if v.quant is None or (v.quant.per_channel and (v.quant.axis != 0 or len(v.quant.scale) != 4)):
                raise KilnError(f"IntegerLSTM weights '{v.name}' need one scale or one per gate", node=node.name)
        for v in ins[1:4]:
            if not v.is_const:
                raise KilnError(f"IntegerLSTM weights and bias ('{v.name}') must be constants", node=node.name)
        if not _power_of_two(ins[5].quant.s):
            raise KilnError(f"IntegerLSTM cell state scale {ins[5].quant.s!r} is not a power of two",
                            node=node.name)
        if ins[0].dtype == "int16":  # TFLM's int64 output stage assumes sums below 2**47
            depth = max(ins[1].shape[2], ins[2].shape[2])
            bound = int(np.abs(ins[3].data.astype(np.int64)).max()) + 65535 * 128 * depth
            if bound >= 1 << 47:
                raise KilnError(f"IntegerLSTM: a gate's sum could reach {bound}, beyond the 2**47 TFLite Micro's "
                                "int16 output stage assumes; not supported", node=node.name)

    @classmethod
    def constants(cls, node, g) -> dict:
        """TFLM's Prepare: each gate's two FC multipliers into 2^-12, the multiplications'
        multipliers, the cell state's tanh rescale and clip."""
        x, w, r, _, h0, c0 = (g.values[n] for n in node.inputs)
        sx, sh, sc = x.quant.s, h0.quant.s, c0.quant.s
        fc_in = [fully_connected_output_multiplier(sx, _gate_scale(w, k), GATE_SCALE) for k in range(4)]
        fc_rec = [fully_connected_output_multiplier(sh, _gate_scale(r, k), GATE_SCALE) for k in range(4)]
        so = NONLINEAR_OUTPUT_SCALE
        power = int(round(float(np.float32(math.log(np.float32(sc)) * (1.0 / math.log(2.0))))))
        shift = 15 + power - 3  # TFLM: the cell state's tanh input, Q3.12
        clip = float(node.attrs["cell_clip"])
        return {"input_offset": -x.quant.zp, "hidden_offset": -h0.quant.zp, "hidden_zero_point": h0.quant.zp,
                "input_multiplier": tuple(m for m, _ in fc_in), "input_shift": tuple(e for _, e in fc_in),
                "recurrent_multiplier": tuple(m for m, _ in fc_rec), "recurrent_shift": tuple(e for _, e in fc_rec),
                **_mul("forget", so * sc / sc), **_mul("update", so * so / sc), **_mul("hidden", so * so / sh),
                "tanh_multiplier": 3 if shift < 0 else 3 << shift, "tanh_right_shift": max(-shift, 0),
                "cell_clip": int(min(max(clip / sc, -32768.0), 32767.0)) if clip > 0 else 0}

    @classmethod
    def reference(cls, node, args, g):
        act = args[0].dtype
        x, w, r, bias, h0, c0 = (np.asarray(a, np.int64) for a in args)
        q = cls.constants(node, g)
        fc = mbqm_s64 if act == np.int16 else mbqm  # TFLM's FC output stage for int64 / int32 sums
        lo, hi = _HIDDEN_RANGE[np.dtype(act).name]
        seq, batch, _, hidden = x.shape[0], x.shape[1], x.shape[2], w.shape[1]
        h, c = h0.copy(), c0.copy()
        y = np.zeros((seq, batch, hidden), act)
        for t in range(seq):
            gates = []
            for k in range(4):
                fi = _sat16(fc((x[t] + q["input_offset"]) @ w[k].T + bias[k], q["input_multiplier"][k],
                                q["input_shift"][k]))
                fr = _sat16(fc((h + q["hidden_offset"]) @ r[k].T, q["recurrent_multiplier"][k],
                                q["recurrent_shift"][k]))
                pre = _sat16(fi + fr)
                gates.append(tanh_int16(pre) if k == 2 else sigmoid_int16(pre))
            i, f, gc, o = (a.astype(np.int64) for a in gates)
            c = _sat16(_sat16(mbqm(f * c, q["forget_multiplier"], q["forget_shift"]))
                       + _sat16(mbqm(i * gc, q["update_multiplier"], q["update_shift"])))
            if q["cell_clip"]:
                c = np.clip(c, -q["cell_clip"], q["cell_clip"])
            th = tanh_int16(c, q["tanh_multiplier"], q["tanh_right_shift"]).astype(np.int64)
            h = np.clip(mbqm(th * o, q["hidden_multiplier"], q["hidden_shift"]) + q["hidden_zero_point"], lo, hi)
            y[t] = h
        return [y, h.astype(act), c.astype(np.int16)]

    @classmethod
    def lower(cls, node, ctx):
        x, w, r, bias, h0, c0 = node.inputs
        seq, batch, inp, hidden = cls.dims(node, [ctx.g.values[n] for n in node.inputs])
        params = {"seq": seq, "batch": batch, "input": inp, "hidden": hidden, "w": ctx.tensor(w),
                  "r": ctx.tensor(r), "bias": ctx.tensor(bias),
                  "sigmoid_table": ctx.constant(node, "sigmoid_table", SIGMOID_TABLE_UINT16, "uint16"),
                  # the steps run: a constant, or a RAM array a bounded time axis sets (codegen/variants/)
                  "steps": ctx.constant(node, "steps", np.array([seq]), "int32"),
                  **cls.constants(node, ctx.g)}
        args = [ctx.tensor(n) for n in (x, h0, c0)] + [ctx.tensor(o) for o in node.outputs]
        kernel = "lstm_s16" if ctx.g.values[x].dtype == "int16" else "lstm_s8"
        ctx.request(KernelRequest(kernel, node, params, (*args, ScratchArg(2 * 4 * hidden)), ("kiln_fixedpoint.h",)))


def _gate_scale(v, k: int) -> float:
    return v.quant.scale[k] if v.quant.per_channel else v.quant.s


def _mul(role: str, real: float) -> dict:
    m, s = quantize_multiplier(real)
    return {f"{role}_multiplier": m, f"{role}_shift": s}


def _sat16(v) -> np.ndarray:
    return np.clip(np.asarray(v, np.int64), -32768, 32767)


def _power_of_two(scale: float) -> bool:
    return math.frexp(float(np.float32(scale)))[0] == 0.5
