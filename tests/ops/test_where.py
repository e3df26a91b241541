"""Where: the reference against onnxruntime with three-way broadcasting (float32 and int64
values), the generated C against the reference; int8 values must share the output's
quantization."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from float_binary_testing import ort_node
from helpers import build_graph
from op_testing import assert_c_equals_reference, graph_of_cases

SHAPES = [((2, 3, 4), (2, 3, 4), (2, 3, 4)), ((3, 1), (1, 4), ()), ((2, 1, 4), (3, 1), (2, 3, 4))]


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_where_matches_onnxruntime_and_c(dtype):
    rng = np.random.default_rng(0)
    cases, feed = [], {}
    for k, (sc, sx, sy) in enumerate(SHAPES):
        def case(b, p, sc=sc, sx=sx, sy=sy):
            return b.node("Where", [b.input(f"{p}c", "bool", sc), b.input(f"{p}x", dtype, sx),
                                    b.input(f"{p}y", dtype, sy)])
        cases.append(case)
        feed[f"c{k}_c"] = np.asarray(rng.integers(0, 2, sc)).astype(np.bool_)
        feed[f"c{k}_x"] = np.asarray(rng.standard_normal(sx) * 100).astype(dtype)
        feed[f"c{k}_y"] = np.asarray(rng.standard_normal(sy) * 100).astype(dtype)
    g = graph_of_cases("where", cases)
    got = run_graph(g, feed)
    for k in range(len(SHAPES)):
        want = ort_node("Where", {"c": feed[f"c{k}_c"], "x": feed[f"c{k}_x"], "y": feed[f"c{k}_y"]})[0]
        np.testing.assert_array_equal(got[g.outputs[k]], want)
    assert_c_equals_reference(g, [feed])


def test_int8_values_keep_their_quantization():
    b = GraphBuilder("where8")
    c = b.input("c", "bool", (4,))
    x = b.input("x", "int8", (4,), Quant.of(0.1, 0))
    y = b.input("y", "int8", (4,), Quant.of(0.2, 0))
    g = b.output(b.node("Where", [c, x, y], quant=Quant.of(0.1, 0))).build()
    with pytest.raises(KilnError, match="quantized as its output"):
        build_graph(g)
