"""Div: the reference against onnxruntime on broadcasts (divisors away from zero), the C
against the reference; division by zero gives IEEE infinities in both."""

import numpy as np

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import check_binary
from op_testing import assert_c_equals_reference


def test_div_matches_onnxruntime_and_c():
    check_binary("Div", "Div", b_lo=0.1, b_hi=4.0)


def test_div_by_zero_is_infinite():
    b = GraphBuilder("div0")
    y = b.node("Div", [b.input("a", "float32", (3,)), b.input("b", "float32", (3,))])
    g = b.output(y).build()
    feed = {"a": np.float32([1, -1, 2]), "b": np.float32([0, 0, 4])}
    np.testing.assert_array_equal(run_graph(g, feed)[y], np.float32([np.inf, -np.inf, 0.5]))
    assert_c_equals_reference(g, [{"a": np.float32([1, -2, 3]), "b": np.float32([4, 5, 6])}])
