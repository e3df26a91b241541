"""Split: the reference against onnxruntime on several axes and sizes, the generated C (one
index_map call per part) against it; sizes that do not add up are refused."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference

CASES = [((6, 4), 0, (2, 4)), ((2, 9, 3), 1, (3, 3, 3)), ((2, 3, 8), -1, (1, 2, 5))]


@pytest.mark.parametrize("shape,axis,sizes", CASES)
def test_split_matches_onnxruntime_and_c(shape, axis, sizes):
    b = GraphBuilder("split")
    outs = b.node("Split", [b.input("x", "float32", shape)], axis=axis, split=sizes)
    g = b.output(*outs).build()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = ort_node("Split", {"x": x, "s": np.array(sizes, np.int64)}, {"axis": axis}, opset=13, n_out=len(sizes))
    got = run_graph(g, {"x": x})
    for name, w in zip(outs, want):
        np.testing.assert_array_equal(got[name], w)
    assert_c_equals_reference(g, [{"x": x}])


def test_sizes_must_cover_the_axis():
    b = GraphBuilder("split_bad")
    with pytest.raises(KilnError, match="add up to 6"):
        b.node("Split", [b.input("x", "float32", (6,))], axis=0, split=(2, 2))
