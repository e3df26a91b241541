"""Small models with fusion opportunities: elementwise chains and inception-style branches.

Used by the fusion tests and by bench/fusion.py. ONNX models are float32 (onnxruntime is their
reference); TFLite models are int8 (TFLite Micro is theirs).
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from onnx_models import ModelBuilder
from tflite_models import ModelWriter, TensorSpec, const


def float_chains():
    """Conv, then swish (Sigmoid -> Mul) and Mul(y) -> Add(channel constant) -> Clip(0, 6)."""
    b = ModelBuilder("chains", 13)
    x = b.input("x", [1, 8, 16, 16])
    y = b.input("y", [1, 8, 16, 16])
    h = b.node("Conv", [x, b.weight("w", (8, 8, 3, 3)), b.weight("b", (8,))], name="conv", pads=[1, 1, 1, 1])
    s = b.node("Sigmoid", [h])
    h = b.node("Mul", [h, s], name="swish")
    h = b.node("Mul", [h, y])
    h = b.node("Add", [h, b.weight("c", (1, 8, 1, 1))])
    b.nodes.append(helper.make_node("Clip", [h, b.scalar("lo", 0.0), b.scalar("hi", 6.0)], ["out"], name="clip"))
    return b.output("out", [1, 8, 16, 16]).model()


def float_elementwise_dag():
    """Two elementwise branches joined by an Add (a DAG, not a chain): Tanh(x*y) + Sigmoid(x-y)."""
    b = ModelBuilder("ew_dag", 13)
    x = b.input("x", [1, 16, 32])
    y = b.input("y", [1, 16, 32])
    p = b.node("Tanh", [b.node("Mul", [x, y])])
    q = b.node("Sigmoid", [b.node("Sub", [x, y])])
    h = b.node("Add", [p, q])
    b.nodes.append(helper.make_node("Neg", [h], ["out"], name="neg"))
    return b.output("out", [1, 16, 32]).model()


def inception(kernels=(1, 1, 1), channels=(8, 8, 8), size=16, cin=16):
    """Parallel convolutions of one input (kernel sizes `kernels`, SAME padding) + Relu each,
    joined by a channel Concat, then a 1x1 convolution."""
    b = ModelBuilder("inception", 13)
    channels = tuple(channels[:len(kernels)])
    x = b.input("x", [1, cin, size, size])
    branches = []
    for k, (ks, co) in enumerate(zip(kernels, channels)):
        h = b.node("Conv", [x, b.weight(f"w{k}", (co, cin, ks, ks), 0.3), b.weight(f"b{k}", (co,))],
                   name=f"branch{k}", pads=[ks // 2] * 4)
        branches.append(b.node("Relu", [h]))
    h = b.node("Concat", branches, name="join", axis=1)
    b.nodes.append(helper.make_node("Conv", [h, b.weight("m", (4, sum(channels), 1, 1), 0.2)], ["y"], name="merge"))
    return b.output("y", [1, 4, size, size]).model()


def _q(shape, scale, zp=0, **kw):
    return TensorSpec(tuple(shape), "int8", scale=scale, zero_point=zp, **kw)


def int8_chain() -> bytes:
    """int8: ADD(x, y) -> MUL(channel constant) -> LOGISTIC -> MUL(x) -> SUB(y), each requantized."""
    rng = np.random.default_rng(3)
    shape = (1, 8, 8, 16)
    w = ModelWriter()
    x = w.tensor(_q(shape, 0.05, -3, name="x"))
    y = w.tensor(_q(shape, 0.04, 5, name="y"))
    s = w.tensor(_q(shape, 0.08, 2, name="sum"))
    c = w.tensor(const(rng.integers(-100, 100, (16,)), "int8", scale=0.02, zero_point=0))
    m = w.tensor(_q(shape, 0.1, -1, name="scaled"))
    g = w.tensor(_q(shape, 1.0 / 256, -128, name="gate"))
    p = w.tensor(_q(shape, 0.03, 0, name="gated"))
    out = w.tensor(_q(shape, 0.06, 1, name="out"))
    w.op("ADD", [x, y], [s], {"fused_activation_function": "NONE"})
    w.op("MUL", [s, c], [m], {"fused_activation_function": "NONE"})
    w.op("LOGISTIC", [m], [g])
    w.op("MUL", [g, x], [p], {"fused_activation_function": "NONE"})
    w.op("SUB", [p, y], [out], {"fused_activation_function": "RELU"})
    return w.build([x, y], [out])


def int8_inception(kernels=(1, 1)) -> bytes:
    """int8: parallel CONV_2D branches (per-channel weights, one output quantization) joined by
    CONCATENATION on channels."""
    rng = np.random.default_rng(5)
    w = ModelWriter()
    x = w.tensor(_q((1, 8, 8, 8), 0.05, -2, name="x"))
    outs = []
    for k, ks in enumerate(kernels):
        co = 6 + 2 * k
        wt = w.tensor(const(rng.integers(-127, 128, (co, ks, ks, 8)), "int8",
                            scale=list(rng.uniform(0.002, 0.01, co)), zero_point=[0] * co))
        bias = w.tensor(const(rng.integers(-500, 500, (co,)), "int32"))
        o = w.tensor(_q((1, 8, 8, co), 0.1, 3, name=f"branch{k}"))
        w.op("CONV_2D", [x, wt, bias], [o], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                              "fused_activation_function": "RELU"})
        outs.append(o)
    y = w.tensor(_q((1, 8, 8, sum(6 + 2 * k for k in range(len(kernels)))), 0.1, 3, name="y"))
    w.op("CONCATENATION", outs, [y], {"axis": 3, "fused_activation_function": "NONE"})
    return w.build([x], [y])
