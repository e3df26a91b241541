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


def test_integer_maximum_matches_onnxruntime_and_c():
    for dtype in ("int8", "uint8", "int32", "int64"):  # onnxruntime has no int16 Max
        check_binary("Maximum", "Max", lo=-100 if dtype != "uint8" else 0, hi=100, dtype=dtype,
                     shapes=[((2, 3, 4), (4,)), ((3, 1), (1, 5))])
