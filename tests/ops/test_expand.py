"""Expand: the reference against onnxruntime (rank growth, 1s in the target shape, bool data),
the generated C (index_map) against it."""

import numpy as np
import pytest

from codegen.ir import run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

CASES = [((3, 1), (2, 3, 4)), ((1,), (5,)), ((2, 1, 4), (1, 3, 1)), ((4,), (2, 1, 3, 4)), ((3, 1), (3, 1))]


@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_expand_matches_onnxruntime_and_c(dtype):
    rng = np.random.default_rng(0)
    cases = [lambda b, p, s=s, t=t: b.node("Expand", [b.input(f"{p}x", dtype, s)], shape=t) for s, t in CASES]
    g = graph_of_cases("expand", cases)
    feed = {f"c{k}_x": np.asarray(rng.standard_normal(s) > 0 if dtype == "bool" else rng.standard_normal(s),
                                  np.bool_ if dtype == "bool" else np.float32) for k, (s, _) in enumerate(CASES)}
    got = run_graph(g, feed)
    for k, (_, t) in enumerate(CASES):
        want = ort_node("Expand", {"x": feed[f"c{k}_x"], "s": np.array(t, np.int64)}, opset=13)[0]
        np.testing.assert_array_equal(got[g.outputs[k]], want)
    assert_c_equals_reference(g, [feed])
