"""ONNX NonZero, Unique and NonMaxSuppression through the frontend: backend node test cases
compiled, run and compared in their actual shapes, and clean refusals (a data-dependent
length feeding another op, a computed max_output_boxes_per_class)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from codegen.errors import KilnError
from codegen.frontends.onnx.convert import build_graph
from codegen.frontends.onnx.reader import parse_model
from helpers import build_graph as compile_test_graph

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))  # bench/ lives in the checkout
from bench.onnx_conformance import collect_cases, run_case  # noqa: E402

CASES = ["test_nonzero_example", "test_unique_bfloat16_sorted_without_axis", "test_unique_sorted_with_negative_axis",
         "test_unique_not_sorted_without_axis", "test_nonmaxsuppression_two_batches",
         "test_nonmaxsuppression_identical_boxes"]


@pytest.mark.parametrize("case", collect_cases(CASES), ids=lambda c: c.name)
def test_backend_case_passes(case):
    result = run_case(case)
    assert result.status == "pass", result.reason


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "m", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return parse_model(model, default_name="m")


def test_non_zero_feeding_transpose_is_refused_naming_the_node():
    model = _model([helper.make_node("NonZero", ["x"], ["nz"], name="find"),
                    helper.make_node("Transpose", ["nz"], ["y"], name="flip")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                   [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    g = build_graph(model, {})
    with pytest.raises(KilnError, match="find.*Kiln compiles it only as a graph output") as err:
        compile_test_graph(g)
    assert "\n" not in str(err.value)


def test_nms_with_a_computed_box_limit_is_refused():
    model = _model([helper.make_node("NonMaxSuppression", ["boxes", "scores", "limit"], ["sel"], name="nms")],
                   [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 4, 4]),
                    helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 4]),
                    helper.make_tensor_value_info("limit", TensorProto.INT64, [1])],
                   [helper.make_tensor_value_info("sel", TensorProto.INT64, None)])
    with pytest.raises(KilnError, match="max_output_boxes_per_class .* must be a constant"):
        build_graph(model, {})


def test_nms_declared_length_within_the_bound_is_accepted():
    """A model declaring the output [2, 3] (its length on some data) compiles with bound [4, 3]."""
    model = _model([helper.make_node("NonMaxSuppression", ["boxes", "scores", "limit"], ["sel"], name="nms")],
                   [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 4, 4]),
                    helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 4])],
                   [helper.make_tensor_value_info("sel", TensorProto.INT64, [2, 3])],
                   [onnx.numpy_helper.from_array(np.array([5], np.int64), "limit")])
    g = build_graph(model, {})
    assert g.values["sel"].shape == (4, 3)
