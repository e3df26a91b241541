"""GatherElements with indices given at run time: several axes, indices smaller than the
data, negative ones, int32 and int64, against onnxruntime; the generated C against the
reference; out-of-range indices are clamped."""

import numpy as np
import pytest

from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from helpers import run_c
from op_testing import assert_c_equals_reference, graph_of_cases

CASES = [((3, 4), (3, 4), 1), ((3, 4), (2, 4), 0), ((2, 3, 4), (2, 2, 3), 2), ((2, 3, 4), (2, 5, 1), 1)]


@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_gather_elements_matches_onnxruntime_and_c(itype):
    rng = np.random.default_rng(0)
    cases, feed = [], {}
    for k, (ds, ish, axis) in enumerate(CASES):
        cases.append(lambda b, p, ds=ds, ish=ish, axis=axis: b.node(
            "GatherElements", [b.input(f"{p}x", "float32", ds), b.input(f"{p}i", itype, ish)], axis=axis))
        feed[f"c{k}_x"] = rng.standard_normal(ds).astype(np.float32)
        feed[f"c{k}_i"] = rng.integers(-ds[axis], ds[axis], ish).astype(itype)
    g = graph_of_cases("gather_elements", cases)
    got = run_graph(g, feed)
    for k, (_, _, axis) in enumerate(CASES):
        want = ort_node("GatherElements", {"x": feed[f"c{k}_x"], "i": feed[f"c{k}_i"]}, {"axis": axis}, opset=13)[0]
        np.testing.assert_array_equal(got[g.outputs[k]], want)
    assert_c_equals_reference(g, [feed])


def test_out_of_range_indices_are_clamped():
    b = GraphBuilder("ge_clamp")
    y = b.node("GatherElements", [b.input("x", "float32", (2, 3)), b.input("i", "int64", (2, 1))], axis=1)
    g = b.output(y).build()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = run_c(g, [{"x": x, "i": np.array([[9], [-7]], np.int64)}])[0][y]
    np.testing.assert_array_equal(out, np.float32([[2], [3]]))
