"""int16 Softmax (TFLite SOFTMAX on int16): TFLite Micro's SoftmaxInt16 with its exp and
reciprocal tables; the numpy reference against the TFLite Micro interpreter and the generated C
against the reference, bit for bit, over full-range rows at several scales and betas."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import Quant, run_graph
from codegen.ops.registry import get_op
from op_testing import assert_c_equals_reference
from tflite_models import TensorSpec, run_tflm, single_op_model
import unary_testing as ut

OUT = (1 / 32768, 0)


@pytest.mark.parametrize("scale,beta", [(0.002, 1.0), (0.0003, 0.7), (0.01, 2.0)])
def test_rows_match_tflm_and_c(scale, beta):
    x = np.random.default_rng(int(scale * 1e4)).integers(-32768, 32768, (48, 37)).astype(np.int16)
    x[0] = 7  # a row of equal values
    model = single_op_model("SOFTMAX", [TensorSpec(x.shape, "int16", scale, 0)], [TensorSpec(x.shape, "int16", *OUT)],
                            {"beta": beta})
    want = run_tflm(model, x)[0]
    g = ut.unary_graph("Softmax", x.shape, "int16", Quant.of(scale, 0), Quant.of(*OUT), beta=beta)
    np.testing.assert_array_equal(run_graph(g, {"x": x})[g.outputs[0]], want)
    out = assert_c_equals_reference(g, [{"x": x}])
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)


def test_other_output_scale_and_axis_are_refused():
    g = ut.unary_graph("Softmax", (2, 5), "int16", Quant.of(0.002, 0), Quant.of(1 / 256, 0))
    with pytest.raises(KilnError, match="1/32768"):
        get_op("Softmax").check(g.nodes[0], g)
    g = ut.unary_graph("Softmax", (2, 5), "int16", Quant.of(0.002, 0), Quant.of(*OUT), axis=0)
    with pytest.raises(KilnError, match="last axis"):
        get_op("Softmax").check(g.nodes[0], g)
