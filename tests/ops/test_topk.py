"""TopK: largest and smallest along several axes on data with ties, values and indices against
onnxruntime, the generated C against the reference."""

import numpy as np
import pytest

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference


@pytest.mark.parametrize("axis,k,largest", [(-1, 3, True), (1, 2, False), (0, 1, True), (2, 6, False)])
def test_topk_matches_onnxruntime_and_c(axis, k, largest):
    x = np.random.default_rng(0).integers(-4, 5, (2, 3, 6)).astype(np.float32)  # ties
    b = GraphBuilder("topk")
    outs = b.node("TopK", [b.input("x", "float32", x.shape)], k=k, axis=axis, largest=largest)
    g = b.output(*outs).build()
    want = ort_node("TopK", {"x": x, "k": np.array([k], np.int64)}, {"axis": axis, "largest": int(largest)},
                    opset=11, n_out=2)
    got = run_graph(g, {"x": x})
    for name, w in zip(outs, want):
        np.testing.assert_array_equal(got[name], w)
    assert_c_equals_reference(g, [{"x": x}])
