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


@pytest.mark.parametrize("dtype", ["int64", "uint64", "int8", "uint16"])
def test_topk_of_integers_matches_numpy_and_c(dtype):
    """Integer values over the whole range (the reference must not negate them), ties to the lower index."""
    info = np.iinfo(dtype)
    x = np.array([[info.max, 3, info.min, 3, 0, info.max], [1, 1, 1, info.min, 2, 0]], dtype)
    b = GraphBuilder("topk_int")
    outs = b.node("TopK", [b.input("x", dtype, x.shape)], k=4, axis=1, largest=True)
    g = b.output(*outs).build()
    values, indices = (run_graph(g, {"x": x})[o] for o in outs)
    order = np.array([sorted(range(6), key=lambda i: (-int(row[i]), i))[:4] for row in x])
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, axis=1))
    assert_c_equals_reference(g, [{"x": x}])
