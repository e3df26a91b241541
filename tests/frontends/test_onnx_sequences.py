"""Sequences of static length resolved at import time (ops_sequence.py): tensor-in, tensor-out
models built from every sequence op, against onnxruntime, and one build of the generated C."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph
from helpers import run_c

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "seq", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, F, None) for n in outputs],
                              [numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m, tmp_path, c=False):
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    feed = om.random_feeds(m, 0)
    want = om.ort_outputs(m, feed)
    got = (run_c(g, [feed])[0]) if c else run_graph(g, feed)
    for name, exp in want.items():
        assert got[name].shape == exp.shape, name
        np.testing.assert_allclose(got[name], exp, rtol=1e-5, atol=1e-6, err_msg=name)


def test_split_map_concat(tmp_path):
    """SplitToSequence (no split: pieces of one, squeezed), SequenceMap with a second sequence
    and a tensor, ConcatFromSequence with and without a new axis."""
    body = helper.make_graph([helper.make_node("Mul", ["a", "b"], ["ab"]), helper.make_node("Add", ["ab", "t"], ["o"])],
                             "body", [helper.make_tensor_value_info(n, F, None) for n in "abt"],
                             [helper.make_tensor_value_info("o", F, None)])
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0),
             helper.make_node("SplitToSequence", ["y", "sizes"], ["s2"], axis=1),
             helper.make_node("SequenceMap", ["s", "s2", "t"], ["m"], body=body),
             helper.make_node("ConcatFromSequence", ["m"], ["stacked"], axis=-1, new_axis=1),
             helper.make_node("ConcatFromSequence", ["m"], ["joined"], axis=0)]
    m = model(nodes, [("x", [2, 3]), ("y", [2, 3]), ("t", [2])], ["stacked", "joined"],
              [("sizes", np.array([1, 1, 1], np.int64))])
    check(m, tmp_path, c=True)


def test_construct_insert_erase_at_length(tmp_path):
    nodes = [helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
             helper.make_node("SequenceInsert", ["s", "z", "zero"], ["s1"]),
             helper.make_node("SequenceErase", ["s1", "minus_one"], ["s2"]),
             helper.make_node("SequenceAt", ["s2", "one"], ["first"]),
             helper.make_node("SequenceLength", ["s2"], ["n"]),
             helper.make_node("Cast", ["n"], ["nf"], to=F),
             helper.make_node("Mul", ["first", "nf"], ["out"])]
    m = model(nodes, [("x", [3]), ("y", [3]), ("z", [3])], ["out"],
              [("zero", np.array(0, np.int64)), ("one", np.array(1, np.int64)), ("minus_one", np.array(-1, np.int64))])
    check(m, tmp_path)


def test_if_with_runtime_condition_selects_sequences(tmp_path):
    def branch(op):
        return helper.make_graph([helper.make_node(op, ["x"], ["v"]), helper.make_node("SequenceConstruct", ["v", "x"],
                                                                                         ["s"])],
                                 op, [], [helper.make_tensor_sequence_value_info("s", F, None)])
    nodes = [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
             helper.make_node("Greater", ["total", "zero"], ["positive"]),
             helper.make_node("If", ["positive"], ["s"], then_branch=branch("Neg"), else_branch=branch("Abs")),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    check(model(nodes, [("x", [4])], ["y"], [("zero", np.float32(0))]), tmp_path)


def test_runtime_position_is_refused(tmp_path):
    nodes = [helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
             helper.make_node("Cast", ["x"], ["i"], to=TensorProto.INT64),
             helper.make_node("ReduceMax", ["i"], ["p"], keepdims=0),
             helper.make_node("SequenceAt", ["s", "p"], ["y"])]
    onnx.save(model(nodes, [("x", [2])], ["y"]), tmp_path / "m.onnx")
    with pytest.raises(KilnError, match="position .* must be a constant"):
        load(tmp_path / "m.onnx", {})
