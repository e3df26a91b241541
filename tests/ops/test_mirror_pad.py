"""MirrorPad: reflect, edge and wrap padding against onnxruntime's Pad, the generated C
(index_map) against the reference."""

import numpy as np
import pytest

from codegen.ir import run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

CASES = [((3, 4), (1, 2, 2, 1)), ((1, 2, 4, 5), (0, 0, 2, 3, 0, 0, 3, 2)), ((5,), (0, 4))]


@pytest.mark.parametrize("mode", ["reflect", "edge", "wrap"])
def test_mirror_pad_matches_onnxruntime_and_c(mode):
    rng = np.random.default_rng(0)
    cases = [lambda b, p, s=s, q=q: b.node("MirrorPad", [b.input(f"{p}x", "float32", s)], pads=q, mode=mode)
             for s, q in CASES]
    g = graph_of_cases("mirror_pad", cases)
    feed = {f"c{k}_x": rng.standard_normal(s).astype(np.float32) for k, (s, _) in enumerate(CASES)}
    got = run_graph(g, feed)
    for k, (_, q) in enumerate(CASES):
        want = ort_node("Pad", {"x": feed[f"c{k}_x"], "p": np.array(q, np.int64)}, {"mode": mode}, opset=19)[0]
        np.testing.assert_array_equal(got[g.outputs[k]], want)
    assert_c_equals_reference(g, [feed])
