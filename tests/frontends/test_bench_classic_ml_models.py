"""The models of bench/classic_ml.py are valid ai.onnx.ml models that Kiln reads as onnxruntime
runs them (the bench's own run checks the generated code on the M4)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import onnx_models as om
from codegen.frontends.onnx import load
from codegen.ir import run_graph

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))  # bench/ lives in the checkout
from bench.classic_ml_models import FEATURES, MODELS  # noqa: E402


@pytest.mark.parametrize("key, build", [(key, build) for key, _, build in MODELS], ids=[k for k, _, _ in MODELS])
def test_bench_model_matches_onnxruntime(key, build, tmp_path):
    m = build()
    onnx.save(m, tmp_path / f"{key}.onnx")
    g = load(tmp_path / f"{key}.onnx", {})
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal((1, FEATURES)).astype(np.float32)
        want = om.ort_outputs(m, {"x": x})
        got = run_graph(g, {"x": x})
        np.testing.assert_array_equal(got["label"], want["label"])
        assert om.max_rel_error(got["probabilities"], want["probabilities"]) <= 1e-5


def test_trees_are_full_and_as_many_as_the_name_says():
    forest = dict((k, b) for k, _, b in MODELS)["forest_100x8"]()
    node = forest.graph.node[0]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert len(set(attrs["nodes_treeids"])) == 100
    assert list(attrs["nodes_modes"]).count(b"LEAF") == 100 * 2 ** 8
