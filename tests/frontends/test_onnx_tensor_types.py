"""ONNX tensors of every element type C can hold: float16, bfloat16, float64, float8, int4 and
the like as model inputs and outputs (stored as such in the C API, computed in float32 or
int8), and integer arithmetic with ONNX's semantics, against onnxruntime or onnx's reference."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_models as om
from codegen.frontends.onnx.convert import build_graph
from codegen.frontends.onnx.reader import parse_model
from helpers import build_graph as compile_for_host
from helpers import run_c


def one_node(op: str, inputs: dict[str, tuple[int, np.ndarray]], out_type: int, out_shape, opset: int = 21,
             consts: dict[str, np.ndarray] | None = None, **attrs) -> onnx.ModelProto:
    """A one-node model; `inputs` maps names to (ONNX element type, example array)."""
    consts = consts or {}
    node = helper.make_node(op, list(inputs) + list(consts), ["y"], **attrs)
    graph = helper.make_graph(
        [node], "types",
        [helper.make_tensor_value_info(n, t, a.shape) for n, (t, a) in inputs.items()],
        [helper.make_tensor_value_info("y", out_type, out_shape)],
        [numpy_helper.from_array(v, n) for n, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=om.ir_version_for(opset))


def run_model(model: onnx.ModelProto, feeds: dict[str, np.ndarray]):
    g = build_graph(parse_model(model), {})
    return g, run_c(g, [feeds])[0]


def test_float16_inputs_and_outputs_are_uint16_bit_patterns_computed_in_float32():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype(np.float16)
    c = np.float16([0.5, -1.25, 3.0, 65504.0, -0.0])
    model = one_node("Add", {"x": (TensorProto.FLOAT16, x)}, TensorProto.FLOAT16, x.shape, consts={"c": c})
    g, got = run_model(model, {"x": x})
    assert g.values["x"].dtype == "float16" and g.values["y"].dtype == "float16"
    want = om.ort_outputs(model, {"x": x})["y"]
    assert got["y"].dtype == np.float16
    np.testing.assert_array_equal(got["y"], want)  # one rounding of the float32 sum: as onnxruntime
    header = compile_for_host(g).files["t.h"]
    assert "const uint16_t" in header


def test_double_inputs_and_outputs_are_c_doubles():
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    model = one_node("Mul", {"x": (TensorProto.DOUBLE, x), "w": (TensorProto.DOUBLE, x)}, TensorProto.DOUBLE, x.shape)
    g, got = run_model(model, {"x": x, "w": x[::-1].copy()})
    want = om.ort_outputs(model, {"x": x, "w": x[::-1].copy()})["y"]
    assert got["y"].dtype == np.float64
    np.testing.assert_allclose(got["y"], want, rtol=1e-6)
    assert "const double" in compile_for_host(g).files["t.h"]


@pytest.mark.parametrize("to,saturate", [(TensorProto.FLOAT8E4M3FN, 1), (TensorProto.FLOAT8E5M2, 0),
                                         (TensorProto.BFLOAT16, 1), (TensorProto.INT4, 1), (TensorProto.UINT2, 1)])
def test_cast_to_narrow_types_matches_onnx_reference(to, saturate):
    from onnx.reference import ReferenceEvaluator

    x = np.float32([0.3, -1.7, 2.5, 500.0, -1e6, np.inf, -9.0, 3.0, 0.0, -0.0, 7.9, -8.9, 15.5, np.nan])
    kwargs = {"saturate": saturate} if to in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2) else {}
    model = one_node("Cast", {"x": (TensorProto.FLOAT, x)}, to, x.shape, to=to, **kwargs)
    _, got = run_model(model, {"x": x})
    with np.errstate(invalid="ignore"):
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert got["y"].dtype == want.dtype
    defined = np.ones(x.shape, bool)
    if to in (TensorProto.INT4, TensorProto.UINT2):
        # ONNX defines float -> integer only in the target's range (truncated toward zero):
        # elsewhere onnx's reference gives whatever ml_dtypes does (wraps before 0.7, 0 since).
        # Kiln saturates, as for every integer target, and NaN gives 0.
        info = ml_dtypes.iinfo(want.dtype)
        whole = np.trunc(np.nan_to_num(x, nan=0.0))
        defined = (whole >= int(info.min)) & (whole <= int(info.max)) & ~np.isnan(x)
        saturated = np.clip(whole, int(info.min), int(info.max))
        np.testing.assert_array_equal(got["y"].astype(np.float32), saturated)
    np.testing.assert_array_equal(got["y"][defined].astype(np.float32), want[defined].astype(np.float32))


def test_int4_input_reads_the_low_bits_and_castlike_ignores_its_empty_type_input():
    x = np.array([-8, -1, 0, 7, 3], dtype=onnx.helper.tensor_dtype_to_np_dtype(TensorProto.INT4))
    like = np.zeros((0,), np.int8)
    model = one_node("CastLike", {"x": (TensorProto.INT4, x), "like": (TensorProto.INT8, like)},
                     TensorProto.INT8, x.shape)
    g, got = run_model(model, {"x": x})
    assert g.inputs == ["x"]  # 'like' is read for its type only
    np.testing.assert_array_equal(got["y"], np.int8([-8, -1, 0, 7, 3]))


@pytest.mark.parametrize("op,attrs", [("Add", {}), ("Sub", {}), ("Mul", {}), ("Div", {}), ("Mod", {"fmod": 0}),
                                      ("Mod", {"fmod": 1}), ("Max", {}), ("Less", {})])
@pytest.mark.parametrize("elem", [TensorProto.INT32, TensorProto.UINT32, TensorProto.INT8, TensorProto.UINT64])
def test_integer_arithmetic_matches_onnx(op, attrs, elem):
    """Wrapping Add/Sub/Mul, Div truncating toward zero, both Mod sign rules: as onnx's
    reference (onnxruntime has no int8 or uint64 kernels for some of these)."""
    from onnx.reference import ReferenceEvaluator

    dtype = helper.tensor_dtype_to_np_dtype(elem)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(elem)
    a = np.concatenate([rng.integers(info.min, info.max, 20, dtype=dtype, endpoint=True),
                        np.array([info.max, info.min, 7, 0], dtype)])
    b = np.concatenate([rng.integers(max(info.min, -9), 10, 20, dtype=dtype, endpoint=True),
                        np.array([2, 3, 3, 5], dtype)])
    b[b == 0] = 1  # ONNX leaves an integer division by zero undefined
    if op in ("Div", "Mod") and info.min < 0:
        b[(a == info.min) & (b == -1)] = 1  # the one overflowing quotient is undefined in ONNX
    out_type = TensorProto.BOOL if op == "Less" else elem
    model = one_node(op, {"a": (elem, a), "b": (elem, b)}, out_type, a.shape, opset=14, **attrs)
    _, got = run_model(model, {"a": a, "b": b})
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, {"a": a, "b": b})[0]
    np.testing.assert_array_equal(got["y"], want)
