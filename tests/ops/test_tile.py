"""Tile: the reference against onnxruntime, the generated C (index_map) against it."""

import numpy as np

from codegen.ir import run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

CASES = [((2, 3), (2, 2)), ((2, 3, 4), (1, 3, 1)), ((5,), (4,)), ((1, 2, 1, 3), (2, 1, 3, 1))]


def test_tile_matches_onnxruntime_and_c():
    rng = np.random.default_rng(0)
    cases = [lambda b, p, s=s, r=r: b.node("Tile", [b.input(f"{p}x", "float32", s)], repeats=r) for s, r in CASES]
    g = graph_of_cases("tile", cases)
    feed = {f"c{k}_x": rng.standard_normal(s).astype(np.float32) for k, (s, _) in enumerate(CASES)}
    got = run_graph(g, feed)
    for k, (_, r) in enumerate(CASES):
        want = ort_node("Tile", {"x": feed[f"c{k}_x"], "r": np.array(r, np.int64)}, opset=13)[0]
        np.testing.assert_array_equal(got[g.outputs[k]], want)
    assert_c_equals_reference(g, [feed])
