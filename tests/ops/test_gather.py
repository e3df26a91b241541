"""Gather: constant indices (index_map) and indices given at run time (gather_rows, int32 and
int64, negative ones counted from the end), the reference against onnxruntime and the
generated C against the reference; runtime indices out of range are clamped, not read."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from helpers import run_c
from op_testing import assert_c_equals_reference, graph_of_cases

DATA = (4, 5, 6)
CASES = [(0, [[1, 3], [0, -1]]), (1, [4, 0, 2]), (2, [-1]), (-1, [[5, 0, 1]]), (1, 3)]


@pytest.mark.parametrize("runtime", [False, True])
@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_gather_matches_onnxruntime_and_c(runtime, itype):
    x = np.random.default_rng(0).standard_normal(DATA).astype(np.float32)
    cases, feed = [], {}
    for k, (axis, idx) in enumerate(CASES):
        arr = np.array(idx, itype)

        def case(b, p, axis=axis, arr=arr):
            i = b.input(f"{p}i", itype, arr.shape) if runtime else b.const(f"{p}i", arr)
            return b.node("Gather", [b.input(f"{p}x", "float32", DATA), i], axis=axis)
        cases.append(case)
        feed[f"c{k}_x"] = x
        if runtime:
            feed[f"c{k}_i"] = arr
    g = graph_of_cases("gather", cases)
    got = run_graph(g, feed)
    for k, (axis, idx) in enumerate(CASES):
        want = ort_node("Gather", {"x": x, "i": np.array(idx, itype)}, {"axis": axis}, opset=13)[0]
        np.testing.assert_array_equal(got[g.outputs[k]], want)
    assert_c_equals_reference(g, [feed])


def test_runtime_indices_are_clamped():
    b = GraphBuilder("gather_clamp")
    y = b.node("Gather", [b.input("x", "float32", (4, 2)), b.input("i", "int64", (3,))], axis=0)
    g = b.output(y).build()
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = run_c(g, [{"x": x, "i": np.array([7, -9, 1], np.int64)}])[0][y]
    np.testing.assert_array_equal(out, x[[3, 0, 1]])


def test_constant_index_out_of_range_is_refused():
    b = GraphBuilder("gather_bad")
    with pytest.raises(KilnError, match="out of range"):
        b.node("Gather", [b.input("x", "float32", (4,)), b.const("i", np.array([4], np.int64))], axis=0)
