"""Maximum (ONNX Max of two inputs): the reference against onnxruntime on broadcasts, the C
against the reference, NaN propagated."""

import numpy as np

from codegen.ir import GraphBuilder
from float_binary_testing import check_binary
from helpers import run_c


def test_maximum_matches_onnxruntime_and_c():
    check_binary("Maximum", "Max")


def test_nan_propagates_in_c():
    b = GraphBuilder("max_nan")
    y = b.node("Maximum", [b.input("a", "float32", (3,)), b.input("b", "float32", (3,))])
    g = b.output(y).build()
    out = run_c(g, [{"a": np.float32([np.nan, 1, 2]), "b": np.float32([0, np.nan, 1])}])[0][y]
    assert np.isnan(out[:2]).all() and out[2] == 2
