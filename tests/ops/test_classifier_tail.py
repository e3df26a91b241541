"""The int8 tail of a classifier (AveragePool2D, Reshape, Mean, Softmax, Quantize, Dequantize,
Sigmoid, Tanh, Clip, MaxPool2D in one graph): the kernels and runtime headers of these ops
build together with the strict flags, and the generated C equals the numpy reference."""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder, Quant
from op_testing import assert_c_equals_reference
from pool_testing import all_int8_values


def test_int8_tail_builds_together_and_matches_reference():
    q = Quant.of(0.08, -128)
    b = GraphBuilder("tail")
    x = b.input("x", "int8", (1, 6, 5, 16), q)
    p = b.node("MaxPool2D", [x], kernel=(2, 2), strides=(1, 1), pads=(0, 0, 1, 1), quant=q)
    c = b.node("Clip", [p], min=0.0, max=6.0, quant=Quant.of(0.05, -100))
    a = b.node("AveragePool2D", [c], kernel=(6, 5), quant=Quant.of(0.05, -100))
    m = b.node("Mean", [c], axes=(1, 2), keepdims=True, quant=Quant.of(0.03, -50))
    r = b.node("Reshape", [a], shape=(1, 16), quant=Quant.of(0.05, -100))
    s = b.node("Softmax", [r], quant=Quant.of(1.0 / 256, -128))
    sig = b.node("Sigmoid", [m], quant=Quant.of(1.0 / 256, -128))
    t = b.node("Tanh", [sig], quant=Quant.of(1.0 / 128, 0))
    rq = b.node("Quantize", [t], quant=Quant.of(0.02, 3))
    d = b.node("Dequantize", [s])
    fq = b.node("Quantize", [d], quant=Quant.of(0.01, -128))
    g = b.output(fq, rq).build()
    rng = np.random.default_rng(0)
    assert_c_equals_reference(g, [{"x": all_int8_values((1, 6, 5, 16), rng)} for _ in range(3)])
