"""QuantizedCumSum (TFLite's int8 CUMSUM): the reference against TFLite Micro one-op models bit
for bit over axes, exclusive / reverse, zero points at both ends, rescaled outputs and rows long
enough for the int32 running sum to wrap; the generated C against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from op_testing import assert_c_equals_reference, finish, graph_of_cases, random_feeds

OP = "QuantizedCumSum"
# (shape, axis, input scale, input zero point, output scale, output zero point)
CASES = [((2, 3, 4), 1, 0.05, -3, 0.05, -3), ((5, 40), 1, 0.1, 0, 0.5, 10), ((64, 3), 0, 0.01, 127, 0.2, -100),
         ((4, 7, 5), -1, 1.0, -128, 3.0, 0), ((300,), 0, 0.05, 5, 0.05, 5)]
FLAGS = [(False, False), (False, True), (True, False), (True, True)]


def _case(shape, axis, s, zp, so, zo, exclusive, reverse):
    def build(b: GraphBuilder, prefix: str) -> str:
        return b.node(OP, [b.input(f"{prefix}x", "int8", shape, Quant.of(s, zp))], quant=Quant.of(so, zo),
                      axis=axis, exclusive=exclusive, reverse=reverse)
    return build


@pytest.mark.parametrize("shape,axis,s,zp,so,zo", CASES)
def test_int8_matches_tflm(shape, axis, s, zp, so, zo):
    from tflite_models import TensorSpec, const, run_tflm, single_op_model

    rng = np.random.default_rng(len(shape) + axis)
    for exclusive, reverse in FLAGS:
        g = graph_of_cases(OP, [_case(shape, axis, s, zp, so, zo, exclusive, reverse)])
        model = single_op_model("CUMSUM", [TensorSpec(shape, "int8", s, zp), const(np.array(axis, np.int32))],
                                [TensorSpec(shape, "int8", so, zo)], {"exclusive": exclusive, "reverse": reverse})
        x = rng.integers(-128, 128, shape).astype(np.int8)
        np.testing.assert_array_equal(run_graph(g, {"c0_x": x})[g.outputs[0]], run_tflm(model, x)[0].reshape(shape))


def test_generated_c_equals_reference():
    g = graph_of_cases(OP, [_case(*c, *f) for c in CASES for f in FLAGS])
    assert_c_equals_reference(g, random_feeds(g, 2, 1))


def test_an_output_scale_below_2_to_the_minus_19_of_the_input_is_refused():
    from helpers import build_graph

    b = GraphBuilder(OP)
    g = finish(b, b.node(OP, [b.input("x", "int8", (8,), Quant.of(1.0, 0))], quant=Quant.of(1e-7, 0), axis=0))
    with pytest.raises(KilnError, match="2\\*\\*-19") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name
