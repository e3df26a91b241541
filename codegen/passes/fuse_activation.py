"""Fuse a Clip (ONNX Relu / Relu6 / Clip, TFLite RELU*) into the `activation` of the op before it.

Any op with a fused `activation` attribute (convolutions, FullyConnected, Add/Sub/Mul,
pools) clamps its output; a Clip right after it whose combined clamp is one of the fused
forms ('relu' [0, inf), 'relu6' [0, 6], 'relu_n1_to_1' [-1, 1]) is folded into it:

- float32: the intersection of both real ranges must be one of those ranges (a bound of
  +-FLT_MAX, which old ONNX Clips use for "none", counts as infinite: it differs only for
  infinite inputs);
- int8, as TFLite fuses them: the Clip must keep the producer's output quantization (then
  it only clamps) and the intersection of the producer's clamp and the Clip's quantized
  bounds must be the clamp TFLite computes for the fused activation, so the result is the
  same integer.

Needs: a verified graph. Keeps: every output's value bit for bit (up to the FLT_MAX note),
output names (the producer takes over the Clip's output). The producer's output must have
no other reader.
"""

from __future__ import annotations

import math

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.ops.clip import quantized_bound
from codegen.ops.common import ACTIVATION_RANGE
from codegen.ops.registry import get_op
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import clone, merged_origin, sole_consumer
from codegen.quant import quantized_activation_range

_FLT_MAX = float(np.finfo(np.float32).max)


def _real(bound: float, infinite: float) -> float:
    return infinite if abs(bound) >= _FLT_MAX else bound


def _float_fusion(producer: Node, clip: Node) -> str | None:
    a_lo, a_hi = ACTIVATION_RANGE[producer.attrs["activation"]]
    lo = max(a_lo, _real(float(clip.attrs["min"]), -math.inf))
    hi = min(a_hi, _real(float(clip.attrs["max"]), math.inf))
    return next((act for act, rng in ACTIVATION_RANGE.items() if act != "none" and rng == (lo, hi)), None)


def _int8_fusion(g: Graph, producer: Node, clip: Node) -> str | None:
    q = g.values[producer.outputs[0]].quant
    if q is None or q.per_channel or g.values[clip.outputs[0]].quant != q:
        return None
    a_lo, a_hi = quantized_activation_range(producer.attrs["activation"], q.s, q.zp)
    lo = max(a_lo, quantized_bound(float(clip.attrs["min"]), q.s, q.zp, -128))
    hi = min(a_hi, quantized_bound(float(clip.attrs["max"]), q.s, q.zp, 127))
    for act in ACTIVATION_RANGE:
        if act != "none" and quantized_activation_range(act, q.s, q.zp) == (lo, hi):
            return act
    return None


def fuse_activations(g: Graph) -> Graph:
    g = clone(g)
    changed = False
    prod = g.producers()
    for clip in list(g.nodes):
        if clip.op != "Clip":
            continue
        producer = prod.get(clip.inputs[0])
        if producer is None or "activation" not in get_op(producer.op).attributes or len(producer.outputs) != 1:
            continue
        if sole_consumer(g, clip.inputs[0]) is not clip:
            continue
        dtype = g.values[clip.inputs[0]].dtype
        act = _float_fusion(producer, clip) if dtype == "float32" else \
            _int8_fusion(g, producer, clip) if dtype == "int8" else None
        if act is None:
            continue
        producer.attrs["activation"] = act
        producer.outputs = [clip.outputs[0]]
        producer.origin = merged_origin(producer, clip)
        g.nodes = [n for n in g.nodes if n is not clip]
        prod = g.producers()
        changed = True
    return eliminate_dead_code(g) if changed else g
