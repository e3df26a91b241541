"""matmul_to_fc: MatMul by a constant matrix becomes FullyConnected (keep_dims)."""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder
from codegen.passes.matmul_to_fc import matmul_to_fully_connected
from pass_testing import assert_same_graph, assert_same_results, ops

B = np.random.default_rng(2).standard_normal((8, 5)).astype(np.float32)


def test_constant_right_operand():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2, 3, 8))
    before = b.output(b.node("MatMul", [x, b.const("b", B)])).build()
    e = GraphBuilder("expected")
    x = e.input("x", "float32", (2, 3, 8))
    expected = e.output(e.node("FullyConnected", [x, e.const("w", B.T.copy())], keep_dims=True)).build()
    after = matmul_to_fully_connected(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)


def test_vector_input_and_computed_operands():
    b = GraphBuilder("before")
    v = b.input("v", "float32", (8,))
    y1 = b.node("MatMul", [v, b.const("b", B)])
    a = b.input("a", "float32", (3, 8))
    y2 = b.node("MatMul", [a, b.node("Sigmoid", [b.const("b2", B)])])   # computed: stays MatMul
    before = b.output(y1, y2).build()
    after = matmul_to_fully_connected(before)
    assert ops(after) == ["FullyConnected", "Sigmoid", "MatMul"]
    assert_same_results(before, after)
