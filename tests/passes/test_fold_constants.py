"""fold_constants: nodes with only constant inputs become constants (numpy reference)."""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder, Quant
from codegen.passes.fold_constants import fold_constants
from pass_testing import assert_same_graph, assert_same_results

RNG = np.random.default_rng(0)
W_OIHW = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
C1 = RNG.standard_normal(4).astype(np.float32)
C2 = RNG.standard_normal(4).astype(np.float32)


def test_weights_computed_in_the_graph_become_one_constant():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 5, 5, 3))
    w = b.node("Transpose", [b.const("w", W_OIHW)], perm=(0, 2, 3, 1))
    scale = b.node("Mul", [b.const("c1", C1), b.const("c2", C2)])
    y = b.node("Conv2D", [x, w, scale], pads=(1, 1, 1, 1))
    before = b.output(y).build()

    e = GraphBuilder("expected")
    x = e.input("x", "float32", (1, 5, 5, 3))
    y = e.node("Conv2D", [x, e.const("w", W_OIHW.transpose(0, 2, 3, 1)), e.const("b", C1 * C2)], pads=(1, 1, 1, 1))
    expected = e.output(y).build()

    after = fold_constants(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)
    assert len(before.nodes) == 3  # the pass does not touch its input


def test_int8_constants_fold_with_their_quantization():
    q = Quant.of(0.05, 3)
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2, 4))
    wq = b.node("Quantize", [b.const("w", C1)], quant=q)
    wf = b.node("Dequantize", [wq])
    y = b.node("Mul", [x, wf])
    before = b.output(y).build()

    e = GraphBuilder("expected")
    x = e.input("x", "float32", (2, 4))
    codes = np.clip(np.floor(np.abs(C1 / np.float32(0.05)) + 0.5) * np.sign(C1) + 3, -128, 127)
    deq = (np.float32(0.05) * (codes - 3)).astype(np.float32)
    y = e.node("Mul", [x, e.const("w", deq)])
    expected = e.output(y).build()

    after = fold_constants(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)


def test_a_constant_graph_output_is_still_computed():
    b = GraphBuilder("before")
    b.input("x", "float32", (4,))
    y = b.node("Add", [b.const("c1", C1), b.const("c2", C2)])
    before = b.output(y).build()
    after = fold_constants(before)
    assert [n.op for n in after.nodes] == ["Add"]
    assert after.inputs == ["x"]
