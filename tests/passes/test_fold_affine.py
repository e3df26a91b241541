"""fold_affine: Mul / Add / Sub by per-channel constants after a float conv / FC fold into it."""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder
from codegen.passes.fold_affine import fold_channel_affine
from pass_testing import assert_same_graph, assert_same_results, ops

RNG = np.random.default_rng(1)
W = RNG.standard_normal((3, 3, 3, 2)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)
K = RNG.standard_normal((1, 1, 3)).astype(np.float32)
S = RNG.standard_normal(3).astype(np.float32)


def test_scale_shift_and_activation_fold_into_the_conv():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 4, 4, 2))
    h = b.node("Conv2D", [x, b.const("w", W), b.const("b", B)])
    h = b.node("Mul", [b.const("k", K), h])
    h = b.node("Add", [h, b.const("s", S)])
    y = b.node("Sub", [h, b.const("one", np.float32(1.0))], activation="relu")
    before = b.output(y).build()

    k = K.reshape(3).astype(np.float64)
    e = GraphBuilder("expected")
    x = e.input("x", "float32", (1, 4, 4, 2))
    y = e.node("Conv2D", [x, e.const("w", (W * k.reshape(3, 1, 1, 1)).astype(np.float32)),
                          e.const("b", (B * k + S - 1.0).astype(np.float32))], activation="relu")
    expected = e.output(y).build()

    after = fold_channel_affine(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)


def test_matmul_bias_after_fully_connected_becomes_its_bias():
    wf = RNG.standard_normal((5, 8)).astype(np.float32)
    bias = RNG.standard_normal((1, 1, 5)).astype(np.float32)
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2, 3, 8))
    h = b.node("FullyConnected", [x, b.const("w", wf)], keep_dims=True)
    before = b.output(b.node("Add", [h, b.const("bias", bias)])).build()
    after = fold_channel_affine(before)
    assert ops(after) == ["FullyConnected"] and len(after.nodes[0].inputs) == 3
    assert_same_results(before, after)


def test_constants_that_vary_along_other_axes_or_grow_the_output_stay():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 4, 4, 2))
    h1 = b.node("Conv2D", [x, b.const("w", W)])
    y1 = b.node("Mul", [h1, b.const("k", RNG.standard_normal((2, 1, 3)).astype(np.float32))])  # varies along H
    h2 = b.node("Conv2D", [x, b.const("w2", W)])
    y2 = b.node("Add", [h2, b.const("s", RNG.standard_normal((2, 1, 1, 1, 3)).astype(np.float32))])  # grows
    h3 = b.node("Conv2D", [x, b.const("w3", W)])
    y3 = b.node("Sub", [b.const("s3", S), h3])                                                  # c - conv
    before = b.output(y1, y2, y3).build()
    after = fold_channel_affine(before)
    assert ops(after) == ops(before)
