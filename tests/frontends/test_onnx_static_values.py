"""Values resolved at import time: Optional / OptionalHasElement / OptionalGetElement
(ops_optional.py) and the ops whose output shape depends on input values (ops_value_shaped.py),
folded when their inputs turn constant during conversion, refused with the reason otherwise."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph

F = TensorProto.FLOAT


def save(tmp_path, nodes, inputs, outputs, inits=(), opset=18):
    graph = helper.make_graph(nodes, "m", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "m.onnx")
    return tmp_path / "m.onnx"


def test_optional_of_a_tensor_is_the_tensor(tmp_path):
    nodes = [helper.make_node("Optional", ["x"], ["o"]),
             helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("OptionalGetElement", ["o"], ["got"]),
             helper.make_node("Cast", ["has"], ["hasf"], to=F),
             helper.make_node("Add", ["got", "hasf"], ["y"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [3])],
                [helper.make_tensor_value_info("y", F, None)])
    x = np.float32([1, 2, 3])
    np.testing.assert_array_equal(run_graph(load(path, {}), {"x": x})["y"], x + 1)


def test_empty_optional_has_no_element_and_cannot_be_read(tmp_path):
    tensor_type = helper.make_tensor_type_proto(F, [3])
    nodes = [helper.make_node("Optional", [], ["o"], type=tensor_type),
             helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("Where", ["has", "x", "zero"], ["y"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [3])],
                [helper.make_tensor_value_info("y", F, None)], [("zero", np.float32(0))])
    np.testing.assert_array_equal(run_graph(load(path, {}), {"x": np.float32([1, 2, 3])})["y"], np.zeros(3))
    nodes[1:] = [helper.make_node("OptionalGetElement", ["o"], ["y"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [3])],
                [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(KilnError, match="the optional is empty"):
        load(path, {})


def test_range_of_values_computed_in_an_if_branch_folds(tmp_path):
    """The If output is constant only once its branch is inlined: Range then folds."""
    branch = helper.make_graph([helper.make_node("Constant", [], ["n"], value=numpy_helper.from_array(np.float32(4)))],
                               "b", [], [helper.make_tensor_value_info("n", F, [])])
    nodes = [helper.make_node("If", ["c"], ["limit"], then_branch=branch, else_branch=branch),
             helper.make_node("Range", ["zero", "limit", "one"], ["r"]),
             helper.make_node("Add", ["x", "r"], ["y"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [4])],
                [helper.make_tensor_value_info("y", F, None)],
                [("c", np.array(True)), ("zero", np.float32(0)), ("one", np.float32(1))])
    got = run_graph(load(path, {}), {"x": np.float32([1, 1, 1, 1])})["y"]
    np.testing.assert_array_equal(got, np.float32([1, 2, 3, 4]))


@pytest.mark.parametrize("op", ["ConstantOfShape", "Range"])
def test_computed_inputs_are_refused_with_the_reason(op, tmp_path):
    inputs, shape = (["x", "x", "x"], []) if op == "Range" else (["x"], [2])
    x = helper.make_tensor_value_info("x", F if op == "Range" else TensorProto.INT64, shape)
    path = save(tmp_path, [helper.make_node(op, inputs, ["y"])], [x], [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(KilnError, match="output shape depends on the values of 'x'"):
        load(path, {})
