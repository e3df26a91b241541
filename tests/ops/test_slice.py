"""Slice: the reference against onnxruntime (negative and out-of-range positions, negative
steps, int64 data), the generated C (index_map) against the reference."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

SHAPE = (3, 4, 5, 6)
CASES = [  # starts, ends, steps (all axes)
    ((0, 0, 0, 0), (3, 4, 5, 6), (1, 1, 1, 1)),
    ((1, 0, 0, 0), (2, 4, 5, 6), (1, 1, 1, 1)),
    ((0, 1, -4, 2), (3, -1, 100, 6), (1, 2, 1, 3)),
    ((-1, 3, 4, 5), (-100, -100, 0, -7), (-1, -2, -1, -2)),
    ((0, 0, 0, 1), (3, 4, 5, 4), (1, 1, 1, 1)),
    ((2, 1, 0, 0), (3, 2, 5, 6), (1, 1, 2, 1)),
]


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_slice_matches_onnxruntime_and_c(dtype):
    x = np.arange(np.prod(SHAPE)).reshape(SHAPE).astype(dtype)
    cases = [lambda b, p, c=c: b.node("Slice", [b.input(f"{p}x", dtype, SHAPE)], starts=c[0], ends=c[1], steps=c[2])
             for c in CASES]
    g = graph_of_cases("slice", cases)
    feed = {f"c{k}_x": x for k in range(len(CASES))}
    got = run_graph(g, feed)
    for k, (s, e, t) in enumerate(CASES):
        want = ort_node("Slice", {"x": x, "s": np.array(s, np.int64), "e": np.array(e, np.int64),
                                  "a": np.arange(4, dtype=np.int64), "t": np.array(t, np.int64)}, opset=13)[0]
        np.testing.assert_array_equal(got[g.outputs[k]], want)
    assert_c_equals_reference(g, [feed])


def test_empty_slice_is_refused():
    b = GraphBuilder("empty")
    with pytest.raises(KilnError, match="empty tensor"):
        b.node("Slice", [b.input("x", "float32", (4,))], starts=(3,), ends=(1,), steps=(1,))
