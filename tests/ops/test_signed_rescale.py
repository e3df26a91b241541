"""SignedRescale (TFLite Micro's int16 ABS and LEAKY_RELU): the TFLite frontend's node on every
int16 input against the TFLite Micro interpreter, and the generated C against the numpy
reference, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.frontends.tflite import load_bytes
from codegen.ir import run_graph
from op_testing import assert_c_equals_reference
from tflite_models import TensorSpec, run_tflm, single_op_model

ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16).reshape(64, 1024)


@pytest.mark.parametrize("builtin,options,out_scale", [
    ("ABS", {}, 0.002), ("ABS", {}, 0.0013), ("LEAKY_RELU", {"alpha": 0.2}, 0.002),
    ("LEAKY_RELU", {"alpha": 0.7}, 0.0031)])
def test_every_input_matches_tflm_and_c(builtin, options, out_scale):
    model = single_op_model(builtin, [TensorSpec(ALL_INT16.shape, "int16", 0.002, 0)],
                            [TensorSpec(ALL_INT16.shape, "int16", out_scale, 0)], options)
    g = load_bytes(model, name="m")
    assert [n.op for n in g.nodes] == ["SignedRescale"]
    want = run_tflm(model, ALL_INT16)[0]
    feed = {g.inputs[0]: ALL_INT16}
    np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], want)
    out = assert_c_equals_reference(g, [feed])
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)
