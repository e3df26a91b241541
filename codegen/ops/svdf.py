"""SVDF: singular value decomposition filter, as TFLite Micro runs it (TFLite SVDF).

Inputs: x [batch, input], weights_feature [filters, input], weights_time [filters, memory],
bias [units] (or ''), state [batch, filters * memory] (the op's variable tensor: the last
`memory` feature projections of each filter). Outputs: y [batch, units] and the next state.

Per call the state moves one step into the past, its newest column becomes the feature
projection of x, each filter's time weights weigh its row, and the `rank` filters of each
unit sum (onto the bias). float32: then the fused activation (a clamp). int8 (TFLite
Micro's integer kernel: int16 state and time weights, int32 bias): the projection is
requantized into the state's scale, the sums into the output's, with TFLM's fixed-point
multipliers; no activation (TFLM's integer kernel applies none).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier
from codegen.quant.params import quantize_multiplier

ACTIVATIONS = {"none": (-np.inf, np.inf), "relu": (0.0, np.inf), "relu6": (0.0, 6.0), "relu_n1_to_1": (-1.0, 1.0)}
# dtypes of x, weights_feature, weights_time, bias, state
INTEGER_TYPES = ("int8", "int8", "int16", "int32", "int16")


@register
class SVDF(Op):
    name = "SVDF"
    kind = OpKind.OPAQUE
    attributes = {"rank": 1, "activation": "none"}
    arity = (5, 5)
    kernels = ("svdf_f32", "svdf_s8")

    @classmethod
    def dims(cls, node, ins) -> tuple[int, int, int, int, int, int]:
        """(batch, input, filters, memory, rank, units), every shape checked against them."""
        x, wf, wt, bias, state = ins
        rank = int(node.attrs["rank"])
        if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2:
            raise KilnError(f"SVDF input, weights_feature and weights_time must have rank 2, got "
                            f"{list(x.shape)}, {list(wf.shape)}, {list(wt.shape)}", node=node.name)
        (batch, inp), (filters, memory) = x.shape, wt.shape
        if wf.shape != (filters, inp) or rank < 1 or filters % rank:
            raise KilnError(f"SVDF weights_feature {list(wf.shape)} and weights_time {list(wt.shape)} do not "
                            f"fit input {list(x.shape)} with rank {rank}", node=node.name)
        units = filters // rank
        if bias is not None and bias.shape != (units,):
            raise KilnError(f"SVDF bias is {list(bias.shape)}, expected [{units}]", node=node.name)
        if state.shape != (batch, filters * memory):
            raise KilnError(f"SVDF state is {list(state.shape)}, expected [{batch}, {filters * memory}]",
                            node=node.name)
        return batch, inp, filters, memory, rank, units

    @classmethod
    def infer(cls, node, ins):
        batch, _, _, _, _, units = cls.dims(node, ins)
        return [(ins[0].dtype, (batch, units)), (ins[4].dtype, ins[4].shape)]

    @classmethod
    def check(cls, node, g):
        ins = [g.values[n] if n else None for n in node.inputs]
        got = tuple(v.dtype if v is not None else None for v in ins)
        if got[0] == "float32" and all(d in ("float32", None) for d in got):
            if node.attrs["activation"] not in ACTIVATIONS:
                raise KilnError(f"SVDF activation '{node.attrs['activation']}' is not supported", node=node.name)
        elif tuple(d if d else INTEGER_TYPES[k] for k, d in enumerate(got)) == INTEGER_TYPES:
            out = g.values[node.outputs[0]]
            for v in [ins[0], ins[1], ins[2], ins[4], out]:
                if v.quant is None or v.quant.per_channel:
                    raise KilnError(f"SVDF '{v.name}' needs one quantization scale", node=node.name)
        else:
            raise KilnError(f"SVDF on {', '.join(str(d) for d in got)} is not supported (float32, or int8 "
                            "with int16 time weights and state, int32 bias)", node=node.name)
        for k in (1, 2, 3):
            if node.inputs[k] and not g.values[node.inputs[k]].is_const:
                raise KilnError(f"SVDF weights and bias ('{node.inputs[k]}') must be constants", node=node.name)

    @classmethod
    def quantized(cls, node, g) -> dict:
        """The integer kernel's constants: TFLM's effective scales (float32 products, as its
        Prepare computes them) as multipliers, and the zero points."""
        x, wf, wt, _, state = (g.values[n] if n else None for n in node.inputs)
        out = g.values[node.outputs[0]]
        s = np.float32
        m1, e1 = quantize_multiplier(float(s(s(x.quant.s) * s(wf.quant.s)) / s(state.quant.s)))
        m2, e2 = quantize_multiplier(float(s(s(state.quant.s) * s(wt.quant.s)) / s(out.quant.s)))
        return {"input_zero_point": x.quant.zp, "state_zero_point": state.quant.zp,
                "output_zero_point": out.quant.zp, "feature_multiplier": m1, "feature_shift": e1,
                "output_multiplier": m2, "output_shift": e2}

    @classmethod
    def reference(cls, node, args, g):
        x, wf, wt, bias, state = args
        batch, _, filters, memory, rank, units = cls.dims(node, [g.values[n] if n else None for n in node.inputs])
        nxt = state.reshape(batch, filters, memory)
        nxt = np.concatenate([nxt[:, :, 1:], np.zeros((batch, filters, 1), nxt.dtype)], axis=2)
        if x.dtype == np.float32:
            return cls._float(node, x, wf, wt, bias, nxt, units, rank)
        return cls._integer(node, g, x, wf, wt, bias, nxt, units, rank)

    @classmethod
    def _float(cls, node, x, wf, wt, bias, nxt, units, rank):
        batch, filters, memory = nxt.shape
        y = np.zeros((batch, units), np.float32)
        lo, hi = ACTIVATIONS[node.attrs["activation"]]
        for b in range(batch):  # TFLM's order of float additions, one at a time
            for f in range(filters):
                nxt[b, f, -1] = _sum_in_order(wf[f] * x[b])
            for u in range(units):
                acc = np.float32(0) if bias is None else bias[u]
                for r in range(rank):
                    acc = np.float32(acc + _sum_in_order(wt[u * rank + r] * nxt[b, u * rank + r]))
                y[b, u] = np.float32(min(max(acc, lo), hi))
        return [y, nxt.reshape(batch, filters * memory)]

    @classmethod
    def _integer(cls, node, g, x, wf, wt, bias, nxt, units, rank):
        q = cls.quantized(node, g)
        batch, filters, memory = nxt.shape
        dot = (x.astype(np.int64) - q["input_zero_point"]) @ wf.astype(np.int64).T  # [batch, filters]
        proj = multiply_by_quantized_multiplier(dot, q["feature_multiplier"], q["feature_shift"])
        nxt[:, :, -1] = np.clip(proj + q["state_zero_point"], -32768, 32767)
        time = np.einsum("bfm,fm->bf", nxt.astype(np.int64) - q["state_zero_point"], wt.astype(np.int64))
        acc = time.reshape(batch, units, rank).sum(axis=2) + (0 if bias is None else bias.astype(np.int64))
        out = multiply_by_quantized_multiplier(acc, q["output_multiplier"], q["output_shift"])
        y = np.clip(out + q["output_zero_point"], -128, 127).astype(np.int8)
        return [y, nxt.reshape(batch, filters * memory).astype(np.int16)]

    @classmethod
    def lower(cls, node, ctx):
        gv = ctx.g.values
        x, wf, wt, bias, state = node.inputs
        batch, inp, filters, memory, rank, units = cls.dims(node, [gv[n] if n else None for n in node.inputs])
        integer = gv[x].dtype == "int8"
        bias_data = gv[bias].data if bias else np.zeros(units, np.int32 if integer else np.float32)
        params = {"batch": batch, "input": inp, "filters": filters, "memory": memory, "rank": rank, "units": units,
                  "weights_feature": ctx.tensor(wf), "weights_time": ctx.tensor(wt),
                  "bias": ctx.constant(node, "bias", bias_data, "int32" if integer else "float32")}
        if integer:
            params.update(cls.quantized(node, ctx.g))
        else:
            lo, hi = ACTIVATIONS[node.attrs["activation"]]
            big = float(np.finfo(np.float32).max)
            params.update(act_min=max(lo, -big), act_max=min(hi, big))
        args = [ctx.tensor(x), ctx.tensor(state), ctx.tensor(node.outputs[0]), ctx.tensor(node.outputs[1])]
        ctx.request(KernelRequest("svdf_s8" if integer else "svdf_f32", node, params, tuple(args),
                                  ("kiln_fixedpoint.h",) if integer else ()))


def _sum_in_order(products: np.ndarray) -> np.float32:
    acc = np.float32(0)
    for v in products.astype(np.float32):
        acc = np.float32(acc + v)
    return acc
