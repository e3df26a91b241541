"""ConvInteger, MatMulInteger and integer MaxPool (ops_integer.py) against ONNX's reference."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph

RNG = np.random.default_rng(7)


def model(node, inputs, inits, out_type, opset=13):
    graph = helper.make_graph([node], "integer", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(node.output[0], out_type, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m, feeds, tmp_path):
    onnx.save(m, tmp_path / "m.onnx")
    got = run_graph(load(tmp_path / "m.onnx", {}), feeds)
    want = ReferenceEvaluator(m).run(None, feeds)[0]
    out = got[m.graph.output[0].name]
    assert out.dtype == want.dtype and out.shape == want.shape
    np.testing.assert_array_equal(out, want)


def test_matmul_integer_uint8_data_int8_weights_per_column_zero_point(tmp_path):
    b = RNG.integers(-128, 128, (16, 5), dtype=np.int8)
    inits = {"B": b, "a_zp": np.array(131, np.uint8), "b_zp": np.arange(-2, 3, dtype=np.int8)}
    node = helper.make_node("MatMulInteger", ["A", "B", "a_zp", "b_zp"], ["Y"])
    a = RNG.integers(0, 256, (2, 3, 16), dtype=np.uint8)
    check(model(node, [("A", TensorProto.UINT8, [2, 3, 16])], inits, TensorProto.INT32), {"A": a}, tmp_path)


@pytest.mark.parametrize("pads", [(0, 0, 0, 0), (1, 0, 1, 2)])
def test_conv_integer_per_channel_weight_zero_point(pads, tmp_path):
    inits = {"w": RNG.integers(0, 256, (3, 2, 2, 3), dtype=np.uint8), "x_zp": np.array(7, np.uint8),
             "w_zp": np.array([128, 3, 250], np.uint8)}
    node = helper.make_node("ConvInteger", ["x", "w", "x_zp", "w_zp"], ["y"], pads=list(pads), strides=[1, 2])
    x = RNG.integers(0, 256, (1, 2, 5, 6), dtype=np.uint8)
    check(model(node, [("x", TensorProto.UINT8, [1, 2, 5, 6])], inits, TensorProto.INT32), {"x": x}, tmp_path)


def test_integer_sums_that_could_leave_float32_exactness_are_refused(tmp_path):
    node = helper.make_node("MatMulInteger", ["A", "B"], ["Y"])
    m = model(node, [("A", TensorProto.UINT8, [1, 300]), ("B", TensorProto.UINT8, [300, 2])], {}, TensorProto.INT32)
    onnx.save(m, tmp_path / "m.onnx")
    with pytest.raises(KilnError, match="2\\^24"):
        load(tmp_path / "m.onnx", {})


@pytest.mark.parametrize("elem, dtype", [(TensorProto.UINT8, np.uint8), (TensorProto.INT16, np.int16),
                                         (TensorProto.UINT16, np.uint16)])
def test_maxpool_on_integers_without_a_kernel(elem, dtype, tmp_path):
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, int(info.max) + 1, (1, 2, 7, 7)).astype(dtype)
    check(model(node, [("x", elem, [1, 2, 7, 7])], {}, elem, opset=12), {"x": x}, tmp_path)
