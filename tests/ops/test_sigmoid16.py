"""int16 Sigmoid and Tanh (TFLite LOGISTIC / TANH on int16): every int16 input, the numpy
reference against the TFLite Micro interpreter and the generated C against the reference, bit
for bit, for a power-of-two input scale (TFLM's exact path) and a general one."""

from __future__ import annotations

import numpy as np
import pytest

import unary_testing as ut
from codegen.errors import KilnError
from codegen.ir import Quant, run_graph
from codegen.ops.registry import get_op
from op_testing import assert_c_equals_reference

ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16).reshape(64, 1024)
OUT = (2.0 ** -15, 0)


@pytest.mark.parametrize("op,builtin", [("Sigmoid", "LOGISTIC"), ("Tanh", "TANH")])
@pytest.mark.parametrize("scale", [2.0 ** -11, 0.0007])
def test_every_input_matches_tflm_and_c(op, builtin, scale):
    g = ut.unary_graph(op, ALL_INT16.shape, "int16", Quant.of(scale, 0), Quant.of(*OUT))
    want = ut.tflite_unary(builtin, (scale, 0), OUT, ALL_INT16, out_dtype="int16", in_dtype="int16")
    np.testing.assert_array_equal(run_graph(g, {"x": ALL_INT16})[g.outputs[0]], want)
    out = assert_c_equals_reference(g, [{"x": ALL_INT16}])
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)


def test_other_output_scale_is_refused():
    g = ut.unary_graph("Tanh", (2, 3), "int16", Quant.of(0.001, 0), Quant.of(0.001, 0))
    with pytest.raises(KilnError, match="2\\^-15"):
        get_op("Tanh").check(g.nodes[0], g)
