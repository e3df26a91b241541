"""fuse_activation: Clip after an op with a fused activation becomes that activation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from codegen.ir import GraphBuilder, Quant
from codegen.passes.fuse_activation import fuse_activations
from pass_testing import assert_same_graph, assert_same_results, ops

RNG = np.random.default_rng(5)
W = RNG.standard_normal((3, 2)).astype(np.float32)
FLT_MAX = float(np.finfo(np.float32).max)


@pytest.mark.parametrize("lo,hi,act", [(0.0, math.inf, "relu"), (0.0, 6.0, "relu6"), (-1.0, 1.0, "relu_n1_to_1"),
                                       (0.0, FLT_MAX, "relu")])
def test_float_clip_folds_into_fully_connected(lo, hi, act):
    b = GraphBuilder("before")
    x = b.input("x", "float32", (4, 2))
    h = b.node("FullyConnected", [x, b.const("w", W)])
    before = b.output(b.node("Clip", [h], min=lo, max=hi, outputs=["y"])).build()
    e = GraphBuilder("expected")
    x = e.input("x", "float32", (4, 2))
    expected = e.output(e.node("FullyConnected", [x, e.const("w", W)], activation=act)).build()
    after = fuse_activations(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)
    assert after.outputs == ["y"] and after.nodes[0].origin == ("fullyconnected", "clip")


def test_clamps_combine_and_other_clips_stay():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2, 8))
    a = b.node("Clip", [b.node("Add", [x, x], activation="relu")], min=-3.0, max=6.0)   # relu, then <= 6
    c = b.node("Clip", [b.node("Add", [x, x])], min=-0.5, max=6.0)                     # not a fused form
    s = b.node("Sigmoid", [x])
    d = b.node("Clip", [s], min=0.0, max=6.0)                                           # no activation attr
    m = b.node("Mul", [x, x])
    e = b.node("Clip", [m], min=0.0, max=6.0)
    before = b.output(a, c, d, e, m).build()                                          # m is read twice
    after = fuse_activations(before)
    assert ops(after) == ["Add", "Add", "Clip", "Sigmoid", "Clip", "Mul", "Clip"]
    assert after.nodes[0].attrs["activation"] == "relu6"
    assert_same_results(before, after)


def test_int8_clip_with_the_producers_quantization_fuses():
    q, qw = Quant.of(0.05, -10), Quant.of(np.full(3, 0.02), 0, 0)
    wq = RNG.integers(-127, 128, (3, 2)).astype(np.int8)
    b = GraphBuilder("before")
    x = b.input("x", "int8", (4, 2), quant=Quant.of(0.1, 0))
    h = b.node("FullyConnected", [x, b.const("w", wq, quant=qw)], quant=q)
    y1 = b.node("Clip", [h], min=0.0, max=6.0, quant=q)
    h2 = b.node("FullyConnected", [x, b.const("w2", wq, quant=qw)], quant=q)
    y2 = b.node("Clip", [h2], min=0.0, max=math.inf, quant=Quant.of(0.1, -128))   # requantizes: stays
    before = b.output(y1, y2).build()
    after = fuse_activations(before)
    assert ops(after) == ["FullyConnected", "FullyConnected", "Clip"]
    assert after.nodes[0].attrs["activation"] == "relu6"
    assert_same_results(before, after, seeds=range(4))
