"""eliminate_dead_code: dead nodes and constants, and no-op nodes, are removed."""

from __future__ import annotations

import math

import numpy as np

from codegen.ir import GraphBuilder, Quant
from codegen.passes.dce import eliminate_dead_code
from pass_testing import assert_same_graph, assert_same_results


def test_noops_dead_branches_and_unused_constants_go():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 4, 4, 2))
    h = b.node("Reshape", [x], shape=(1, 4, 4, 2))
    h = b.node("Transpose", [h], perm=(0, 1, 2, 3))
    h = b.node("Pad", [h], pads=(0,) * 8)
    h = b.node("Clip", [h], min=-math.inf, max=math.inf)
    dead = b.node("Sigmoid", [h])
    b.node("Add", [dead, b.const("unused", np.ones(2, np.float32))])
    y = b.node("Tanh", [h])
    before = b.output(y).build()

    e = GraphBuilder("expected")
    x = e.input("x", "float32", (1, 4, 4, 2))
    expected = e.output(e.node("Tanh", [x])).build()

    after = eliminate_dead_code(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)
    assert set(after.values) == {"x", after.outputs[0]}


def test_transpose_of_size_one_axes_keeping_the_shape_is_a_noop():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 1, 6))
    h = b.node("Transpose", [x], perm=(1, 0, 2))
    before = b.output(b.node("Sigmoid", [h])).build()
    after = eliminate_dead_code(before)
    assert [n.op for n in after.nodes] == ["Sigmoid"]


def test_a_noop_producing_an_output_hands_over_the_output_name():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2, 3))
    h = b.node("Sigmoid", [x])
    y = b.node("Reshape", [h], shape=(2, 3), outputs=["result"])
    before = b.output(y).build()
    after = eliminate_dead_code(before)
    assert after.outputs == ["result"]
    assert [(n.op, n.outputs) for n in after.nodes] == [("Sigmoid", ["result"])]
    assert_same_results(before, after)


def test_a_noop_between_input_and_output_stays_as_a_copy():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2, 3))
    before = b.output(b.node("Reshape", [x], shape=(2, 3))).build()
    assert [n.op for n in eliminate_dead_code(before).nodes] == ["Reshape"]


def test_int8_noops_need_equal_quantization():
    q, other = Quant.of(0.1, 2), Quant.of(0.2, 2)
    b = GraphBuilder("before")
    x = b.input("x", "int8", (8,), quant=q)
    same = b.node("Clip", [x], quant=q)
    requant = b.node("Quantize", [same], quant=other)   # a real requantization: kept
    y = b.node("Quantize", [requant], quant=other)      # int8 -> int8, same quantization: a no-op
    before = b.output(b.node("Reshape", [y], shape=(2, 4), quant=other)).build()
    after = eliminate_dead_code(before)
    assert [n.op for n in after.nodes] == ["Quantize", "Reshape"]
    assert_same_results(before, after)


def test_unused_graph_inputs_stay():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2,))
    b.input("unused", "float32", (3,))
    before = b.output(b.node("Sigmoid", [x])).build()
    after = eliminate_dead_code(before)
    assert after.inputs == ["x", "unused"] and "unused" in after.values
