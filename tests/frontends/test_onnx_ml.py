"""Binarizer and ArrayFeatureExtractor of ai.onnx.ml (ops_ml.py) against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx_models as om
from codegen.frontends.onnx import load
from codegen.ir import run_graph


def ml_model(op, inputs, **attrs):
    graph = helper.make_graph([helper.make_node(op, [n for n, _, _ in inputs], ["y"], domain="ai.onnx.ml", **attrs)],
                              "ml", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    m.ir_version = 8
    return m


def test_binarizer(tmp_path):
    m = ml_model("Binarizer", [("x", TensorProto.FLOAT, [3, 4])], threshold=0.25)
    onnx.save(m, tmp_path / "m.onnx")
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(run_graph(load(tmp_path / "m.onnx", {}), {"x": x})["y"],
                                  om.ort_outputs(m, {"x": x})["y"])


@pytest.mark.parametrize("shape", [(3, 4), (5,)])
def test_array_feature_extractor(shape, tmp_path):
    m = ml_model("ArrayFeatureExtractor", [("x", TensorProto.FLOAT, list(shape)), ("i", TensorProto.INT64, [2])])
    onnx.save(m, tmp_path / "m.onnx")
    feed = {"x": np.random.default_rng(1).standard_normal(shape).astype(np.float32), "i": np.array([2, 0], np.int64)}
    got = run_graph(load(tmp_path / "m.onnx", {}), feed)["y"]
    want = om.ort_outputs(m, feed)["y"]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_model_importing_only_the_ml_domain(tmp_path):
    """A model whose opset_import lists ai.onnx.ml alone (as converters of classic ML models
    write them) is read; its ai.onnx semantics are those of the oldest opset Kiln reads."""
    m = ml_model("Binarizer", [("x", TensorProto.FLOAT, [2, 3])], threshold=0.0)
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    onnx.save(m, tmp_path / "m.onnx")
    x = np.array([[-1.0, 0.0, 2.0], [3.0, -0.5, 0.25]], np.float32)
    np.testing.assert_array_equal(run_graph(load(tmp_path / "m.onnx", {}), {"x": x})["y"],
                                  np.array([[0, 0, 1], [1, 0, 1]], np.float32))
