"""MaxPool / AveragePool / LpPool forms routed to PoolND (ops_pool_nd.py): 3-D inputs,
dilations, auto_pad, ceil mode and MaxPool's Indices output, against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx_models as om
from codegen.frontends.onnx import load
from codegen.ir import run_graph

CASES = [
    ("max3d_ceil", "MaxPool", (1, 2, 6, 7, 5), dict(kernel_shape=[2, 3, 2], strides=[2, 2, 2], ceil_mode=1)),
    ("max2d_dilated", "MaxPool", (1, 2, 8, 8), dict(kernel_shape=[2, 2], dilations=[2, 3], pads=[1, 0, 0, 1])),
    ("avg3d_same", "AveragePool", (1, 2, 7, 6, 5), dict(kernel_shape=[3, 2, 2], strides=[2, 1, 2],
                                                       auto_pad="SAME_UPPER")),
    ("avg3d_include_pad", "AveragePool", (2, 1, 5, 5, 5), dict(kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 0, 1],
                                                               count_include_pad=1)),
    ("avg2d_dilated_ceil", "AveragePool", (1, 1, 9, 9), dict(kernel_shape=[2, 2], dilations=[2, 2], strides=[2, 2],
                                                             ceil_mode=1)),
    ("lp3d", "LpPool", (1, 2, 5, 6, 4), dict(kernel_shape=[2, 2, 2], p=3, pads=[0, 1, 0, 0, 1, 1])),
]


def pool_model(op, shape, attrs, n_out=1):
    outs = ["y", "i"][:n_out]
    graph = helper.make_graph([helper.make_node(op, ["x"], outs, **attrs)], "pool",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
                              + [helper.make_tensor_value_info("i", TensorProto.INT64, None)] * (n_out - 1))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    return m


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_onnxruntime(case, tmp_path):
    _, op, shape, attrs = case
    m = pool_model(op, shape, attrs)
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    assert "PoolND" in [n.op for n in g.nodes]
    feed = om.random_feeds(m, 3)
    assert om.max_rel_error(run_graph(g, feed)["y"], om.ort_outputs(m, feed)["y"]) <= 1e-5


@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices_match_onnxruntime(storage_order, tmp_path):
    m = pool_model("MaxPool", (2, 3, 7, 6), dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 0, 0],
                                                 storage_order=storage_order), n_out=2)
    onnx.save(m, tmp_path / "m.onnx")
    feed = om.random_feeds(m, 4)
    got, want = run_graph(load(tmp_path / "m.onnx", {}), feed), om.ort_outputs(m, feed)
    np.testing.assert_array_equal(got["y"], want["y"])
    np.testing.assert_array_equal(got["i"], want["i"])
