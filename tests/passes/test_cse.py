"""eliminate_common_subexpressions: identical constants and nodes computed once."""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder
from codegen.passes.cse import eliminate_common_subexpressions
from pass_testing import assert_same_graph, assert_same_results

W = np.random.default_rng(0).standard_normal((3, 1, 1, 2)).astype(np.float32)


def test_repeated_transposes_and_constants_merge():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 2, 4, 4))
    t1 = b.node("Transpose", [x], perm=(0, 2, 3, 1))
    a = b.node("Conv2D", [t1, b.const("wa", W)])
    t2 = b.node("Transpose", [x], perm=(0, 2, 3, 1))
    c = b.node("Conv2D", [t2, b.const("wb", W.copy())])   # same weights, another initializer
    d = b.node("Transpose", [x], perm=(0, 3, 2, 1))       # another perm: not the same node
    y = b.node("Concat", [a, c, b.node("Sigmoid", [d])], axis=3)
    before = b.output(y).build()

    e = GraphBuilder("expected")
    x = e.input("x", "float32", (1, 2, 4, 4))
    t = e.node("Transpose", [x], perm=(0, 2, 3, 1))
    a = e.node("Conv2D", [t, e.const("w", W)])
    d = e.node("Transpose", [x], perm=(0, 3, 2, 1))
    y = e.node("Concat", [a, a, e.node("Sigmoid", [d])], axis=3)
    expected = e.output(y).build()

    after = eliminate_common_subexpressions(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)


def test_duplicates_computing_graph_outputs_are_kept():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (4,))
    before = b.output(b.node("Sigmoid", [x]), b.node("Sigmoid", [x])).build()
    after = eliminate_common_subexpressions(before)
    assert len(after.nodes) == 2 and after.outputs == before.outputs
