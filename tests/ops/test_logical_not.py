"""Not: the reference against onnxruntime, the generated C against the reference."""

import numpy as np

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference


def test_not_matches_onnxruntime_and_c():
    b = GraphBuilder("not")
    y = b.node("Not", [b.input("x", "bool", (3, 7))])
    g = b.output(y).build()
    x = np.random.default_rng(0).integers(0, 2, (3, 7)).astype(np.bool_)
    np.testing.assert_array_equal(run_graph(g, {"x": x})[y], ort_node("Not", {"x": x})[0])
    assert_c_equals_reference(g, [{"x": x}])
