"""BitwiseNot: the reference against onnxruntime on every integer dtype, the generated C against
the reference (also in place over its input)."""

import numpy as np
import pytest

from bitwise_testing import int_values
from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from codegen.ops.bitwise import INTEGERS
from float_binary_testing import ort_node
from helpers import build_graph
from op_testing import assert_c_equals_reference, graph_of_cases


@pytest.mark.parametrize("dtype", INTEGERS)
def test_reference_matches_onnxruntime(dtype):
    x = int_values(dtype, (4, 5), np.random.default_rng(0))
    g = GraphBuilder("t")
    y = g.node("BitwiseNot", [g.input("x", dtype, x.shape)])
    np.testing.assert_array_equal(run_graph(g.output(y).build(), {"x": x})[y], ort_node("BitwiseNot", {"x": x})[0])


def test_c_matches_reference():
    rng = np.random.default_rng(1)
    cases, feed = [], {}
    for k, dtype in enumerate(INTEGERS):
        # not of not of x: the second one may run in place over the first's arena buffer
        cases.append(lambda b, p, dtype=dtype: b.node("BitwiseNot", [b.node("BitwiseNot", [
            b.node("BitwiseNot", [b.input(f"{p}x", dtype, (7, 3))])])]))
        feed[f"c{k}_x"] = int_values(dtype, (7, 3), rng)
    g = graph_of_cases("bitwise_not", cases)
    assert_c_equals_reference(g, [feed])


def test_float_input_is_refused():
    b = GraphBuilder("t")
    g = b.output(b.node("BitwiseNot", [b.input("x", "float32", (2,))])).build()
    with pytest.raises(KilnError, match="BitwiseNot on float32 is not supported"):
        build_graph(g)
