"""collapse_reshapes: Reshape chains become one Reshape; FullyConnected reads through them."""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder
from codegen.passes.collapse_reshapes import collapse_reshapes
from pass_testing import assert_same_graph, assert_same_results, ops

W = np.random.default_rng(4).standard_normal((3, 16)).astype(np.float32)


def test_chains_collapse_and_fully_connected_reads_its_rows_directly():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 2, 2, 4))
    h = b.node("Reshape", [x], shape=(1, 16))       # Flatten
    h = b.node("Reshape", [h], shape=(1, 1, 16))    # Unsqueeze
    h = b.node("Reshape", [h], shape=(16,))         # Squeeze
    y1 = b.node("Sigmoid", [h])
    f = b.node("Reshape", [x], shape=(1, 16))
    y2 = b.node("FullyConnected", [f, b.const("w", W)])
    before = b.output(y1, y2).build()

    e = GraphBuilder("expected")
    x = e.input("x", "float32", (1, 2, 2, 4))
    y1 = e.node("Sigmoid", [e.node("Reshape", [x], shape=(16,))])
    y2 = e.node("FullyConnected", [x, e.const("w", W)])
    expected = e.output(y1, y2).build()

    after = collapse_reshapes(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)


def test_fully_connected_keeping_dims_keeps_its_reshape():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2, 8, 2))
    f = b.node("Reshape", [x], shape=(2, 16))
    before = b.output(b.node("FullyConnected", [f, b.const("w", W)], keep_dims=True)).build()
    assert ops(collapse_reshapes(before)) == ["Reshape", "FullyConnected"]
