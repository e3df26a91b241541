"""The bit-operation converters (ops_bitwise.py): BitwiseAnd / Or / Xor / Not and BitShift
against onnxruntime, BitCast against numpy's view (also of a float16 input Kiln computes as
float32, whose stored bits must survive)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import onnx_models as om
from codegen.frontends.onnx import load
from codegen.ir import run_graph
from helpers import run_c


def one_node(op, inputs: dict, opset, out_type=None, **attrs):
    elem = {k: helper.np_dtype_to_tensor_dtype(v.dtype) for k, v in inputs.items()}
    graph = helper.make_graph([helper.make_node(op, list(inputs), ["y"], **attrs)], "bits",
                              [helper.make_tensor_value_info(k, elem[k], v.shape) for k, v in inputs.items()],
                              [helper.make_tensor_value_info("y", out_type or next(iter(elem.values())), None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"])
def test_bitwise_ops_match_onnxruntime(op, tmp_path):
    rng = np.random.default_rng(0)
    inputs = {"a": rng.integers(-1000, 1000, (3, 4)).astype(np.int16)}
    if op != "BitwiseNot":
        inputs["b"] = rng.integers(-1000, 1000, (4,)).astype(np.int16)
    m = one_node(op, inputs, 18)
    onnx.save(m, tmp_path / "m.onnx")
    got = run_graph(load(tmp_path / "m.onnx", {}), inputs)["y"]
    np.testing.assert_array_equal(got, om.ort_outputs(m, inputs)["y"])


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_matches_onnxruntime(direction, tmp_path):
    rng = np.random.default_rng(1)
    inputs = {"x": rng.integers(0, 2 ** 32, (2, 5), dtype=np.uint64).astype(np.uint32),
              "s": rng.integers(0, 32, (5,)).astype(np.uint32)}
    m = one_node("BitShift", inputs, 11, direction=direction)
    onnx.save(m, tmp_path / "m.onnx")
    got = run_graph(load(tmp_path / "m.onnx", {}), inputs)["y"]
    np.testing.assert_array_equal(got, om.ort_outputs(m, inputs)["y"])


def test_bit_cast_keeps_the_stored_bits(tmp_path):
    x = np.float16([1.0, -2.5, 65504.0, 6e-8, 0.0, -0.0])
    m = one_node("BitCast", {"x": x}, 26, out_type=onnx.TensorProto.UINT16, to=onnx.TensorProto.UINT16)
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    np.testing.assert_array_equal(run_graph(g, {"x": x})["y"], x.view(np.uint16))
    (out,) = run_c(g, [{"x": x}])
    np.testing.assert_array_equal(out["y"], x.view(np.uint16))
