"""HybridLSTM: LiteRT's hybrid ("dynamic-range quantized") LSTM, float32 activations and state,
int8 weight matrices with one scale each (TFLite UNIDIRECTIONAL_SEQUENCE_LSTM as the converter
writes it with dynamic-range quantization), step by step as LiteRT's LstmStepHybrid runs it.

Layouts are the LSTM op's (codegen/ops/recurrent.py, ONNX's gate order i, o, f, c, one
direction): x [seq, batch, input] float32, w [1, 4 * hidden, input] and r [1, 4 * hidden,
hidden] int8, bias [1, 8 * hidden] float32 (Wb then Rb), h0 and c0 [1, batch, hidden], float
peepholes [1, 3 * hidden] (i, o, f). Attributes: the scale of each gate's input and recurrent
matrix (`w_scales`, `r_scales`, gate order i, o, f, c) and `asymmetric` (the op's
asymmetric_quantize_inputs).

At each step, for each batch row, x_t and h are quantized to int8 as LiteRT's
BatchQuantizeFloats does (codegen/ops/hybrid_quant.py: symmetric, or asymmetric with a zero
point). Each gate starts from its bias; W_g x_t and then R_g h are int32 dot products (less
zero point x row sum when asymmetric) converted to float and multiplied by (row scale x
matrix scale), each added in float32; then the peephole, the activation, c' = f * c + g * i,
the output gate (its peephole on c') and h' = o * tanh(c'), each a float32 operation in
LiteRT's order.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from codegen.errors import KilnError
from codegen.ops.hybrid_quant import quantize_asymmetric, quantize_symmetric
from codegen.ops.lstm import LSTM
from codegen.ops.recurrent import RecurrentOp, sigmoid
from codegen.ops.registry import register
from codegen.ops.request import ScratchArg
from codegen.quant.linear import INT32_MAX

_F32 = np.float32


@register
class HybridLSTM(LSTM):
    name = "HybridLSTM"
    kernels = ("hybrid_lstm_f32",)
    attributes = {**RecurrentOp.attributes, "w_scales": (), "r_scales": (), "asymmetric": False}

    @classmethod
    def check(cls, node, g):
        ins = [g.values[n] if n else None for n in node.inputs]
        for k, v in enumerate(ins):
            want = "int8" if k in (1, 2) else "float32"
            if v is not None and v.dtype != want:
                raise KilnError(f"HybridLSTM input {k} ('{v.name}') is {v.dtype}, expected {want}", node=node.name)
            if v is not None and k in (1, 2, 3, 6) and not v.is_const:
                raise KilnError(f"HybridLSTM weights and bias ('{v.name}') must be constants", node=node.name)
        for key in ("w_scales", "r_scales"):
            if len(node.attrs[key]) != 4:
                raise KilnError(f"HybridLSTM {key} must give one scale per gate (4), got {len(node.attrs[key])}",
                                node=node.name)
        if node.attrs["direction"] == "bidirectional" or float(node.attrs["clip"]) != 0.0:
            raise KilnError("HybridLSTM runs one direction without clip", node=node.name)
        for v in ins[1:3]:  # the dot product and zero point x row sum each reach 128 x sum |w|
            worst = int(np.abs(v.data.astype(np.int64)).sum(axis=-1).max()) if v.data.size else 0
            if 256 * worst > INT32_MAX:
                raise KilnError(f"HybridLSTM rows of '{v.name}' could overflow the int32 accumulator", node=node.name)

    @classmethod
    def step(cls, node, x_t, h, c, w, r, b, p, clip):
        hs = h.size
        quantize = quantize_asymmetric if node.attrs["asymmetric"] else quantize_symmetric
        gates = np.asarray(b[:4 * hs], _F32) + np.asarray(b[4 * hs:], _F32)
        for m, v, scales in ((w, x_t, node.attrs["w_scales"]), (r, h, node.attrs["r_scales"])):
            q = quantize(np.asarray(v, _F32))
            m = np.asarray(m, np.int64)
            dots = m @ q.codes.astype(np.int64) - q.zero_point * m.sum(axis=1)
            scale = np.repeat(np.asarray([_F32(q.scale) * _F32(s) for s in scales], _F32), hs)
            gates = (gates + (dots.astype(_F32) * scale).astype(_F32)).astype(_F32)
        i = sigmoid((gates[:hs] + (p[:hs] * c).astype(_F32)).astype(_F32)).astype(_F32)
        f = sigmoid((gates[2 * hs:3 * hs] + (p[2 * hs:] * c).astype(_F32)).astype(_F32)).astype(_F32)
        g = np.tanh(gates[3 * hs:]).astype(_F32)
        c_new = ((f * c).astype(_F32) + (g * i).astype(_F32)).astype(_F32)
        o = sigmoid((gates[hs:2 * hs] + (p[hs:2 * hs] * c_new).astype(_F32)).astype(_F32)).astype(_F32)
        return (o * np.tanh(c_new).astype(_F32)).astype(_F32), c_new

    @classmethod
    def extra_params(cls, node) -> dict:
        return {"asymmetric": bool(node.attrs["asymmetric"])}

    @classmethod
    def lower(cls, node, ctx):
        """The LSTM's request (codegen/ops/recurrent.py) with the matrices' scales, its scratch
        grown by the step's quantized x and h (int8) beside the gates."""
        requests = []
        super().lower(node, _Capture(ctx, requests))
        (request,) = requests
        _, _, inp, hidden, _ = cls.dims(node, [ctx.g.values[n] if n else None for n in node.inputs])
        scratch = ScratchArg(4 * 4 * hidden + _word_bytes(inp) + _word_bytes(hidden))
        scales = np.asarray(tuple(node.attrs["w_scales"]) + tuple(node.attrs["r_scales"]), _F32)
        params = {**request.params, "scales": ctx.constant(node, "scales", scales, "float32")}
        ctx.request(replace(request, params=params, args=request.args[:-1] + (scratch,),
                            headers=("math.h", "kiln_hybrid.h")))


def _word_bytes(n: int) -> int:
    """n int8 codes, rounded up to whole words (the next array stays aligned)."""
    return -(-n // 4) * 4


class _Capture:
    """The lowering context with its `request` kept aside (the rest passes through)."""

    def __init__(self, ctx, requests: list):
        self._ctx, self._requests = ctx, requests

    def request(self, request) -> None:
        self._requests.append(request)

    def __getattr__(self, name):
        return getattr(self._ctx, name)
