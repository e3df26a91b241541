"""LabelEncoder (ai.onnx.ml 2 and 4) with numeric keys and values against onnxruntime, the
generated C against the numpy reference; string tensors refused in one line."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtNotImplemented

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph
from op_testing import assert_c_equals_reference

ONNX_TYPE = {"float32": TensorProto.FLOAT, "int64": TensorProto.INT64, "int32": TensorProto.INT32,
             "int16": TensorProto.INT16}


def encoder_model(x_type: str, y_type: str, ml_opset: int, shape=(3, 7), **attrs) -> onnx.ModelProto:
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], "enc", [helper.make_tensor_value_info("x", ONNX_TYPE[x_type], list(shape))],
                              [helper.make_tensor_value_info("y", ONNX_TYPE[y_type], list(shape))])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("ai.onnx.ml", ml_opset)])
    m.ir_version = 10
    return m


def check(m: onnx.ModelProto, x: np.ndarray, tmp_path) -> None:
    """Kiln equals onnxruntime bit for bit (onnx's reference for the type pairs onnxruntime
    lacks, int32 -> int16...), and the C equals Kiln."""
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    try:
        want = om.ort_outputs(m, {"x": x})["y"]
    except OrtNotImplemented:
        want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = run_graph(g, {"x": x})["y"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert_c_equals_reference(g, [{"x": x}])


def float_inputs(seed: int, keys: np.ndarray) -> np.ndarray:
    """Keys, NaN (two bit patterns), -0.0 and values that are no key."""
    rng = np.random.default_rng(seed)
    pool = np.concatenate([keys[~np.isnan(keys)], [np.nan, -0.0, 0.5, -7.25, 1e30]]).astype(np.float32)
    x = rng.choice(pool, (3, 7)).astype(np.float32)
    x.reshape(-1)[0] = np.frombuffer(np.uint32(0x7FC00001).tobytes(), np.float32)[0]  # another NaN payload
    return x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_float_keys_to_int64_with_nan_key(seed, tmp_path):
    keys = np.array([2.5, np.nan, -1.0, 0.0, 3.75, 100.0], np.float32)
    m = encoder_model("float32", "int64", 4, keys_floats=keys.tolist(), values_int64s=[1, 2, 3, 4, 5, 6],
                      default_int64=-9)
    check(m, float_inputs(seed, keys), tmp_path)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_int64_keys_to_floats_default(seed, tmp_path):
    """No default_float: ONNX's -0.0."""
    keys = np.random.default_rng(seed).choice(1000, 12, replace=False) - 500
    m = encoder_model("int64", "float32", 2, keys_int64s=keys.tolist(),
                      values_floats=np.random.default_rng(seed).normal(size=12).astype(np.float32).tolist())
    x = np.random.default_rng(seed + 9).choice(np.concatenate([keys, [7, -501, 2**40]]), (3, 7)).astype(np.int64)
    check(m, x, tmp_path)


@pytest.mark.parametrize("x_type,y_type", [("int32", "int16"), ("int16", "float32"), ("float32", "int32"),
                                           ("int64", "int64")])
def test_tensor_keys_and_values(x_type, y_type, tmp_path):
    """Opset 4 keys_tensor / values_tensor / default_tensor of each numeric type."""
    rng = np.random.default_rng(3)
    keys = (rng.choice(200, 9, replace=False) - 100).astype(x_type)
    values = rng.integers(-300, 300, 9).astype(y_type)
    m = encoder_model(x_type, y_type, 4, keys_tensor=numpy_helper.from_array(keys),
                      values_tensor=numpy_helper.from_array(values),
                      default_tensor=numpy_helper.from_array(np.array([42], y_type)))
    x = rng.choice(np.concatenate([keys, np.array([101, -101], x_type)]), (3, 7)).astype(x_type)
    check(m, x, tmp_path)


def test_strings_refused_in_one_line(tmp_path):
    m = encoder_model("int64", "int64", 2, keys_int64s=[1, 2], values_strings=["a", "b"])
    onnx.save(m, tmp_path / "m.onnx")
    with pytest.raises(KilnError, match="string tensors"):
        load(tmp_path / "m.onnx", {})
