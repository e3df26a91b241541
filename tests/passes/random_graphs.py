"""Hypothesis strategies: random small graphs of the kinds the passes rewrite.

`float_graphs` builds NCHW graphs the way the ONNX frontend imports them (spatial ops wrapped
in NCHW <-> NHWC transposes) from convolutions, depthwise convolutions, max pools, BatchNorm,
clips, elementwise ops with per-channel constants, joins (Add, Concat) of earlier values, Pads,
Reshape chains, constant subgraphs, duplicated and dead nodes, and an optional classifier head
(mean, flatten, MatMul, bias). `int8_graphs` builds NHWC int8 graphs as a TFLite model has
them (convolutions, clips, pads, max pools, adds, transposes, reshapes).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from codegen.ir import Graph, GraphBuilder, Quant

NHWC, NCHW = (0, 2, 3, 1), (0, 3, 1, 2)
FLOAT_STEPS = ["conv", "dwconv", "maxpool", "bn", "clip", "unary", "mul_c", "add_c", "join", "concat",
               "pad_conv", "reshapes", "const_sub", "dup", "dead"]
INT8_STEPS = ["conv", "clip", "pad_conv", "maxpool", "add", "transposes", "reshapes"]


class _Gen:
    def __init__(self, draw, seed: int):
        self.draw = draw
        self.rng = np.random.default_rng(seed)
        self.b = GraphBuilder("random")

    def f32(self, *shape, lo=None, hi=None) -> np.ndarray:
        if lo is not None:
            return self.rng.uniform(lo, hi, shape).astype(np.float32)
        return self.rng.standard_normal(shape).astype(np.float32)

    def shape(self, v: str) -> tuple[int, ...]:
        return self.b.g.values[v].shape

    def window(self, h: int, w: int, k: int) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
        """Strides and pads (each < k) that leave an output of at least one pixel."""
        pads = tuple(self.draw(st.integers(0, k - 1)) for _ in range(4))
        strides = tuple(self.draw(st.integers(1, 2)) for _ in range(2))
        if h + pads[0] + pads[2] < k or w + pads[1] + pads[3] < k:
            pads = (k - 1,) * 4
        return strides, pads


# -- float, NCHW as imported from ONNX ------------------------------------------------------

def _nchw_conv(gen: _Gen, x: str, depthwise: bool, pad: str | None = None) -> str:
    b, draw = gen.b, gen.draw
    _, c, h, w = gen.shape(x)
    t = b.node("Transpose", [pad or x], perm=NHWC)
    if pad is not None:
        _, c, h, w = gen.shape(pad)
    k = draw(st.sampled_from([1, 3]))
    strides, pads = gen.window(h, w, k)
    bias = [b.const("b", gen.f32(c if depthwise else 0))] if depthwise and draw(st.booleans()) else []
    if depthwise:
        y = b.node("DepthwiseConv2D", [t, b.const("w", gen.f32(1, k, k, c))] + bias, strides=strides, pads=pads)
    else:
        o = draw(st.integers(1, 4))
        bias = [b.const("b", gen.f32(o))] if draw(st.booleans()) else []
        y = b.node("Conv2D", [t, b.const("w", gen.f32(o, k, k, c))] + bias, strides=strides, pads=pads,
                   activation=draw(st.sampled_from(["none", "none", "relu"])))
    return b.node("Transpose", [y], perm=NCHW)


def _float_step(gen: _Gen, kind: str, x: str, values: list[str]) -> str:
    b, draw = gen.b, gen.draw
    _, c, h, w = gen.shape(x)
    if kind == "conv":
        return _nchw_conv(gen, x, depthwise=False)
    if kind == "dwconv":
        return _nchw_conv(gen, x, depthwise=True)
    if kind == "pad_conv":
        p = b.node("Pad", [x], pads=(0, 0, draw(st.integers(0, 2)), draw(st.integers(0, 2)),
                                     0, 0, draw(st.integers(0, 2)), draw(st.integers(0, 2))))
        return _nchw_conv(gen, x, depthwise=draw(st.booleans()), pad=p)
    if kind == "maxpool":
        t = b.node("Transpose", [x], perm=NHWC)
        k = min(2, h, w)
        strides, pads = gen.window(h, w, k)
        y = b.node("MaxPool2D", [t], kernel=(k, k), strides=strides, pads=pads)
        return b.node("Transpose", [y], perm=NCHW)
    if kind == "bn":
        params = [b.const("s", gen.f32(c)), b.const("o", gen.f32(c)), b.const("m", gen.f32(c)),
                  b.const("v", gen.f32(c, lo=0.5, hi=2.0))]
        return b.node("BatchNorm", [x] + params, axis=1)
    if kind == "clip":
        lo, hi = draw(st.sampled_from([(0.0, math.inf), (0.0, 6.0), (-1.0, 1.0), (-0.5, 2.0)]))
        return b.node("Clip", [x], min=lo, max=hi)
    if kind == "unary":
        return b.node(draw(st.sampled_from(["Sigmoid", "Tanh"])), [x])
    if kind in ("mul_c", "add_c"):
        shape = draw(st.sampled_from([(c, 1, 1), (1,), ()]))
        const = b.const("c", gen.f32(*shape) if shape else np.float32(gen.f32(1)[0]))
        op = "Mul" if kind == "mul_c" else draw(st.sampled_from(["Add", "Sub"]))
        return b.node(op, [x, const] if draw(st.booleans()) or op == "Sub" else [const, x])
    if kind == "const_sub":
        c1, c2 = b.const("c1", gen.f32(c, 1, 1)), b.const("c2", gen.f32(c, 1, 1))
        return b.node("Add", [x, b.node("Mul", [c1, c2])])
    same = [v for v in values if gen.shape(v) == gen.shape(x) and v != x]
    if kind == "join" and same:
        return b.node("Add", [x, draw(st.sampled_from(same))])
    joinable = [v for v in values if gen.shape(v)[2:] == (h, w)]
    if kind == "concat" and joinable:
        return b.node("Concat", [x, draw(st.sampled_from(joinable))], axis=1)
    if kind == "reshapes":
        r = b.node("Reshape", [x], shape=(1, c, h * w))
        r = b.node("Reshape", [r], shape=(1, c, h * w, 1))
        return b.node("Reshape", [r], shape=(1, c, h, w))
    if kind == "dup":
        a = b.node("Sigmoid", [x])
        d = b.node("Sigmoid", [x])
        return b.node("Add", [a, d])
    b.node("Tanh", [x])  # "dead", or a join without a partner: a node nobody reads
    return x


@st.composite
def float_graphs(draw) -> Graph:
    gen = _Gen(draw, draw(st.integers(0, 2 ** 31)))
    b = gen.b
    x = b.input("x", "float32", (1, draw(st.integers(1, 4)), draw(st.integers(3, 6)), draw(st.integers(3, 6))))
    values = [x]
    for kind in draw(st.lists(st.sampled_from(FLOAT_STEPS), min_size=2, max_size=7)):
        x = _float_step(gen, kind, x, values)
        values.append(x)
    if draw(st.booleans()):
        _, c, _, _ = gen.shape(x)
        m = b.node("Mean", [x], axes=(2, 3), keepdims=True)
        f = b.node("Reshape", [m], shape=(1, c))
        y = b.node("MatMul", [f, b.const("fc", gen.f32(c, 3))])
        x = b.node("Add", [y, b.const("bias", gen.f32(3))])
    return b.output(x).build()


# -- int8, NHWC as imported from TFLite -------------------------------------------------------

def _quant(gen: _Gen, scale_lo=0.02, scale_hi=0.1) -> Quant:
    return Quant.of(float(gen.rng.uniform(scale_lo, scale_hi)), int(gen.rng.integers(-20, 21)))


def _int8_conv(gen: _Gen, x: str, source: str | None = None) -> str:
    b, draw = gen.b, gen.draw
    _, h, w, c = gen.shape(source or x)
    k = draw(st.sampled_from([1, 3]))
    strides, pads = gen.window(h, w, k)
    o = draw(st.integers(1, 4))
    qx = b.g.values[x].quant
    w_scales = gen.rng.uniform(0.005, 0.02, o)
    weights = b.const("w", gen.rng.integers(-127, 128, (o, k, k, c)).astype(np.int8), quant=Quant.of(w_scales, 0, 0))
    bias = b.const("b", gen.rng.integers(-2000, 2000, o).astype(np.int32), quant=Quant.of(qx.s * w_scales, 0, 0))
    out_scale = qx.s * float(w_scales.max()) * 128 * math.sqrt(k * k * c) / 8
    return b.node("Conv2D", [x, weights, bias], strides=strides, pads=pads,
                  activation=draw(st.sampled_from(["none", "relu"])),
                  quant=Quant.of(out_scale, int(gen.rng.integers(-10, 11))))


def _int8_step(gen: _Gen, kind: str, x: str, values: list[str]) -> str:
    b, draw = gen.b, gen.draw
    q = b.g.values[x].quant
    _, h, w, c = gen.shape(x)
    if kind == "conv":
        return _int8_conv(gen, x)
    if kind == "pad_conv":
        p = b.node("Pad", [x], pads=(0, draw(st.integers(0, 2)), draw(st.integers(0, 2)), 0,
                                     0, draw(st.integers(0, 2)), draw(st.integers(0, 2)), 0), quant=q)
        return _int8_conv(gen, p)
    if kind == "clip":
        lo, hi = draw(st.sampled_from([(0.0, math.inf), (0.0, 6.0), (-1.0, 1.0), (-0.3, 0.4)]))
        out = q if draw(st.booleans()) else _quant(gen)
        return b.node("Clip", [x], min=lo, max=hi, quant=out)
    if kind == "maxpool":
        k = min(2, h, w)
        strides, pads = gen.window(h, w, k)
        value = -math.inf if draw(st.booleans()) else 0.0
        p = b.node("Pad", [x], pads=(0, 1, 0, 0, 0, 0, 1, 0), value=value, quant=q) if draw(st.booleans()) else x
        _, ph, pw, _ = gen.shape(p)
        strides, pads = gen.window(ph, pw, k)
        return b.node("MaxPool2D", [p], kernel=(k, k), strides=strides, pads=pads, quant=q)
    if kind == "add":
        same = [v for v in values if gen.shape(v) == gen.shape(x)]
        return b.node("Add", [x, draw(st.sampled_from(same))], quant=_quant(gen, 0.05, 0.2),
                      activation=draw(st.sampled_from(["none", "relu"])))
    if kind == "transposes":
        t = b.node("Transpose", [x], perm=NCHW, quant=q)
        t = b.node("Clip", [t], min=0.0, max=math.inf, quant=q)
        return b.node("Transpose", [t], perm=NHWC, quant=q)
    r = b.node("Reshape", [x], shape=(1, h * w, c), quant=q)
    return b.node("Reshape", [r], shape=(1, h, w, c), quant=q)


@st.composite
def int8_graphs(draw) -> Graph:
    gen = _Gen(draw, draw(st.integers(0, 2 ** 31)))
    shape = (1, draw(st.integers(3, 6)), draw(st.integers(3, 6)), draw(st.integers(1, 4)))
    x = gen.b.input("x", "int8", shape, quant=_quant(gen))
    values = [x]
    for kind in draw(st.lists(st.sampled_from(INT8_STEPS), min_size=2, max_size=6)):
        x = _int8_step(gen, kind, x, values)
        values.append(x)
    return gen.b.output(x).build()
