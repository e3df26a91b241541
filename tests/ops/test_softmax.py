"""Softmax: float32 against onnxruntime (any axis; beta by scaling the input), int8 against
TFLite Micro's SOFTMAX (one-op models with the quantizations of the MLPerf Tiny models and
random ones; non-last axes through a transposed TFLM run), and the generated C against the
numpy reference (rows along a non-last axis go through the strided kernel)."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from helpers import build_graph
from op_testing import assert_c_equals_reference, finish, run_onnx_node
from pool_testing import all_int8_values

OP = "Softmax"
OUT_Q = Quant.of(1.0 / 256, -128)


def softmax_graph(shape, dtype, qi=None, qo=None, **attrs):
    b = GraphBuilder("softmax")
    x = b.input("x", dtype, shape, qi)
    return finish(b, b.node(OP, [x], quant=qo, **attrs))


@pytest.mark.parametrize("shape,axis,beta", [
    ((2, 10), -1, 1.0),
    ((3, 4, 5), 1, 1.0),      # strided rows
    ((3, 4, 5), 0, 0.5),
    ((1, 1000), 1, 2.0),
    ((2, 3, 1), -1, 1.0),     # one-element rows
])
def test_float_matches_onnxruntime_and_c(shape, axis, beta):
    rng = np.random.default_rng(0)
    g = softmax_graph(shape, "float32", axis=axis, beta=beta)
    feeds = [{"x": (rng.standard_normal(shape) * 5).astype(np.float32)} for _ in range(2)]
    for feed in feeds:
        want = run_onnx_node("Softmax", {"x": feed["x"] * np.float32(beta)}, {"axis": axis}, opset=13)
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    assert_c_equals_reference(g, feeds)


def tflm_softmax(x, qi, beta):
    from tflite_models import TensorSpec, run_tflm, single_op_model

    model = single_op_model("SOFTMAX", [TensorSpec(x.shape, "int8", *qi)],
                            [TensorSpec(x.shape, "int8", 1.0 / 256, -128)], {"beta": beta})
    return run_tflm(model, x)[0]


def check_int8(shape, axis, qi, beta=1.0, seed=0):
    rng = np.random.default_rng(seed)
    g = softmax_graph(shape, "int8", Quant.of(*qi), OUT_Q, axis=axis, beta=beta)
    feeds = [{"x": all_int8_values(shape, rng)} for _ in range(2)]
    # Rows that tie at the maximum, and rows of equal values.
    feeds.append({"x": np.where(rng.random(shape) < 0.5, 127, -128).astype(np.int8)})
    feeds.append({"x": np.zeros(shape, np.int8)})
    for feed in feeds:
        rows = np.ascontiguousarray(np.moveaxis(feed["x"], axis, -1))
        want = np.moveaxis(tflm_softmax(rows, qi, beta), -1, axis)
        got = run_graph(g, feed)[g.outputs[0]]
        np.testing.assert_array_equal(got, want)
    assert_c_equals_reference(g, feeds)


# Input quantization (scale, zero point) of the SOFTMAX of each MLPerf Tiny int8 model.
MLPERF = {"vww": ((1, 2), (0.014636218547821045, -5)), "kws": ((1, 12), (0.14469251036643982, 14)),
          "resnet": ((1, 10), (0.17185351252555847, 24)), "str_ww": ((1, 3), (0.1605089008808136, 10))}


@pytest.mark.parametrize("model", sorted(MLPERF))
def test_int8_mlperf_softmax_quantizations_match_tflm(model):
    (_, depth), qi = MLPERF[model]
    check_int8((64, depth), -1, qi)


@pytest.mark.parametrize("shape,axis,qi,beta,seed", [
    ((16, 10), -1, (0.05, -3), 1.0, 1),
    ((8, 33), 1, (0.3, 100), 0.7, 2),
    ((4, 6, 5), 1, (0.1, 0), 1.0, 3),     # strided rows
    ((5, 3, 4), 0, (0.02, -128), 2.0, 4),
])
def test_int8_matches_tflm_and_c(shape, axis, qi, beta, seed):
    check_int8(shape, axis, qi, beta, seed)


def test_int8_output_quantization_must_be_tflm_format():
    g = softmax_graph((1, 4), "int8", Quant.of(0.1, 0), Quant.of(1.0 / 255, -128))
    with pytest.raises(KilnError, match="1/256"):
        build_graph(g)


def test_axis_out_of_range_is_refused():
    b = GraphBuilder("softmax")
    x = b.input("x", "float32", (2, 3))
    with pytest.raises(KilnError, match="out of range"):
        b.node(OP, [x], axis=2)


def test_strided_int8_uses_a_scratch_row_and_last_axis_does_not():
    strided = build_graph(softmax_graph((4, 6, 5), "int8", Quant.of(0.1, 0), OUT_Q, axis=1))
    assert "softmax_strided_s8" in strided.manifest["kernels"]
    last = build_graph(softmax_graph((4, 6, 5), "int8", Quant.of(0.1, 0), OUT_Q))
    assert "softmax_s8" in last.manifest["kernels"]
    assert last.plan.arena_size < strided.plan.arena_size
