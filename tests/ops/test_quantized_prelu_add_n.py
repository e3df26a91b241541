"""QuantizedPRelu and QuantizedAddN (TFLite Micro's int8 / int16 PRELU and int8 ADD_N): the
TFLite frontend's node against the TFLite Micro interpreter on every int8 input (and a sweep of
int16 ones), and the generated C against the numpy reference, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.frontends.tflite import load_bytes
from codegen.ir import run_graph
from op_testing import assert_c_equals_reference
from tflite_models import TensorSpec, const, run_tflm, single_op_model

ALPHAS = np.array([-128, -77, -1, 0, 1, 5, 64, 127], np.int8)  # one per channel


def _check(model, op, feeds):
    g = load_bytes(model, name="m")
    assert [n.op for n in g.nodes] == [op]
    want = run_tflm(model, *feeds)[0]
    feed = dict(zip(g.inputs, feeds))
    np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], want)
    out = assert_c_equals_reference(g, [feed])
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)


@pytest.mark.parametrize("dtype,in_q,alpha_q,out_q", [
    ("int8", (0.05, -3), (0.01, 4), (0.05, -3)), ("int8", (0.02, 17), (0.003, -128), (0.07, 9)),
    ("int16", (0.002, 0), (0.01, 4), (0.0031, 0))])
def test_prelu_on_every_input_matches_tflm_and_c(dtype, in_q, alpha_q, out_q):
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1, 1 if dtype == "int8" else 37).astype(dtype)
    x = np.repeat(values[:, None], len(ALPHAS), axis=1)[None]  # every value against every alpha
    alpha = const(ALPHAS, "int8", scale=alpha_q[0], zero_point=alpha_q[1])
    model = single_op_model("PRELU", [TensorSpec(x.shape, dtype, *in_q), alpha], [TensorSpec(x.shape, dtype, *out_q)])
    _check(model, "QuantizedPRelu", [x])


@pytest.mark.parametrize("count,in_q,out_q", [(2, (0.05, -128), (0.05, 127)), (4, (0.02, 37), (0.09, -11)),
                                              (15, (0.01, 127), (0.2, 0))])
def test_add_n_int8_matches_tflm_and_c(count, in_q, out_q):
    rng = np.random.default_rng(count)
    feeds = [rng.integers(-128, 128, (1, 16, 16)).astype(np.int8) for _ in range(count)]
    feeds[0][0, 0] = 127  # the extremes together
    feeds[1][0, 0] = 127
    spec = TensorSpec((1, 16, 16), "int8", *in_q)
    model = single_op_model("ADD_N", [spec] * count, [TensorSpec((1, 16, 16), "int8", *out_q)])
    _check(model, "QuantizedAddN", feeds)
