"""IsNaN: NaN, infinities and numbers against onnxruntime, the generated C against the
reference."""

import numpy as np

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference

X = np.float32([np.nan, np.inf, -np.inf, 0.0, -1.5, 3.4e38, np.nan, 1e-45])


def test_isnan_matches_onnxruntime_and_c():
    b = GraphBuilder("isnan")
    y = b.node("IsNaN", [b.input("x", "float32", X.shape)])
    g = b.output(y).build()
    np.testing.assert_array_equal(run_graph(g, {"x": X})[y], ort_node("IsNaN", {"x": X}, opset=13)[0])
    assert_c_equals_reference(g, [{"x": X}])
