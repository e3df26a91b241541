"""QuantizedSum (TFLite SUM on int8 / int16): the TFLite frontend's node against the TFLite Micro
interpreter and the generated C against the numpy reference, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.frontends.tflite import load_bytes
from codegen.ir import run_graph
from op_testing import assert_c_equals_reference
from tflite_models import TensorSpec, const, run_tflm, single_op_model


@pytest.mark.parametrize("dtype,in_q,out_q", [("int8", (0.05, -3), (0.4, 5)), ("int16", (0.002, 0), (0.03, 0)),
                                              ("int16", (0.002, 0), (0.002, 0))])  # the last one saturates
def test_sum_matches_tflm_and_c(dtype, in_q, out_q):
    info = np.iinfo(dtype)
    x = np.random.default_rng(3).integers(info.min, info.max + 1, (2, 5, 6, 3)).astype(dtype)
    model = single_op_model("SUM", [TensorSpec(x.shape, dtype, *in_q), const(np.array([1, 2], np.int32))],
                            [TensorSpec((2, 3), dtype, *out_q)], {"keep_dims": False})
    g = load_bytes(model, name="m")
    assert [n.op for n in g.nodes] == ["QuantizedSum"]
    want = run_tflm(model, x)[0]
    feed = {g.inputs[0]: x}
    np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], want)
    out = assert_c_equals_reference(g, [feed])
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)
