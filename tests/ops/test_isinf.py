"""IsInf: every detect_negative / detect_positive combination against onnxruntime, the
generated C against the reference."""

import itertools

import numpy as np
import pytest

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference

X = np.float32([np.nan, np.inf, -np.inf, 0.0, -1.5, 3.4e38, -3.4e38, 1e-45])


@pytest.mark.parametrize("neg,pos", list(itertools.product([False, True], repeat=2)))
def test_isinf_matches_onnxruntime_and_c(neg, pos):
    b = GraphBuilder("isinf")
    y = b.node("IsInf", [b.input("x", "float32", X.shape)], detect_negative=neg, detect_positive=pos)
    g = b.output(y).build()
    want = ort_node("IsInf", {"x": X}, {"detect_negative": int(neg), "detect_positive": int(pos)}, opset=13)[0]
    np.testing.assert_array_equal(run_graph(g, {"x": X})[y], want)
    assert_c_equals_reference(g, [{"x": X}])
