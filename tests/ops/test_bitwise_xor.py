"""BitwiseXor: the reference against onnxruntime on every integer dtype, the generated C against
the reference (one kernel per element width serves both signednesses)."""

import numpy as np
import pytest

from bitwise_testing import SHAPES, check_binary_c, int_values
from codegen.ir import GraphBuilder, run_graph
from codegen.ops.bitwise import INTEGERS
from float_binary_testing import ort_node


@pytest.mark.parametrize("dtype", INTEGERS)
def test_reference_matches_onnxruntime(dtype):
    rng = np.random.default_rng(1)
    for sa, sb in SHAPES:
        a, b = int_values(dtype, sa, rng), int_values(dtype, sb, rng)
        g = GraphBuilder("t")
        y = g.node("BitwiseXor", [g.input("a", dtype, sa), g.input("b", dtype, sb)])
        got = run_graph(g.output(y).build(), {"a": a, "b": b})[y]
        np.testing.assert_array_equal(got, ort_node("BitwiseXor", {"a": a, "b": b})[0])


def test_c_matches_reference():
    check_binary_c("BitwiseXor")
