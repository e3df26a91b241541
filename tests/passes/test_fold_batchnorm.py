"""fold_batchnorm: BatchNorm after a float conv / FC moves into its weights and bias."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import GraphBuilder
from codegen.passes.fold_batchnorm import fold_batchnorm
from pass_testing import assert_same_graph, assert_same_results, ops

RNG = np.random.default_rng(0)
SCALE, SHIFT, MEAN = (RNG.standard_normal(4).astype(np.float32) for _ in range(3))
VAR = RNG.uniform(0.5, 2.0, 4).astype(np.float32)
EPS = 1e-3


def bn_params(b):
    return [b.const(n, d) for n, d in (("s", SCALE), ("o", SHIFT), ("m", MEAN), ("v", VAR))]


def k_s():
    k = SCALE.astype(np.float64) / np.sqrt(VAR.astype(np.float64) + EPS)
    return k, SHIFT - MEAN * k


@pytest.mark.parametrize("op,wshape,axis,xshape", [
    ("Conv2D", (4, 3, 3, 2), 0, (1, 5, 5, 2)),
    ("DepthwiseConv2D", (1, 3, 3, 4), 3, (1, 5, 5, 4)),
    ("FullyConnected", (4, 6), 0, (2, 6)),
])
def test_batchnorm_folds_into_the_linear_op(op, wshape, axis, xshape):
    weights = RNG.standard_normal(wshape).astype(np.float32)
    bias = RNG.standard_normal(4).astype(np.float32)
    b = GraphBuilder("before")
    x = b.input("x", "float32", xshape)
    h = b.node(op, [x, b.const("w", weights), b.const("b", bias)])
    y = b.node("BatchNorm", [h] + bn_params(b), axis=len(xshape) - 1, epsilon=EPS)
    before = b.output(y).build()

    k, s = k_s()
    shape = [1] * len(wshape)
    shape[axis] = 4
    e = GraphBuilder("expected")
    x = e.input("x", "float32", xshape)
    y = e.node(op, [x, e.const("w", (weights * k.reshape(shape)).astype(np.float32)),
                    e.const("b", (bias * k + s).astype(np.float32))])
    expected = e.output(y).build()

    after = fold_batchnorm(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)
    assert after.outputs == before.outputs and after.nodes[0].origin == ("conv2d" if op == "Conv2D" else
                                                                          op.lower(), "batchnorm")


def test_batchnorm_stays_without_a_foldable_producer():
    weights = RNG.standard_normal((4, 1, 1, 2)).astype(np.float32)
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 3, 3, 2))
    h = b.node("Conv2D", [x, b.const("w", weights)], activation="relu")    # activation in between
    y1 = b.node("BatchNorm", [h] + bn_params(b), axis=3)
    h2 = b.node("Conv2D", [x, b.const("w2", weights)])
    y2 = b.node("BatchNorm", [h2] + bn_params(b), axis=3)
    y3 = b.node("Sigmoid", [h2])                                           # a second reader
    x4 = b.input("x4", "float32", (1, 4, 3, 3))
    y4 = b.node("BatchNorm", [x4] + bn_params(b), axis=1)                  # nothing before it
    before = b.output(y1, y2, y3, y4).build()
    after = fold_batchnorm(before)
    assert ops(after) == ops(before)
