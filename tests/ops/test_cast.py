"""Cast: every pair of Kiln's dtypes, the reference against onnxruntime on in-range values
and the generated C against the reference on all values (saturating float -> integer,
wrapping integer narrowing, NaN and infinities)."""

import itertools

import numpy as np
import pytest
from onnx import helper

from codegen.ir import GraphBuilder, run_graph
from codegen.ops.cast import TYPE_CODES
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

DTYPES = list(TYPE_CODES)
EDGE = np.float32([0, -0.0, 0.4, -0.6, 1.5, -1.5, 127.9, -128.9, 255.5, 300, -300, 40000, -40000, 3e9, -3e9,
                   1e19, -1e19, np.inf, -np.inf, np.nan])


def values(dtype: str, rng) -> np.ndarray:
    if dtype == "float32":
        return np.concatenate([EDGE, rng.uniform(-200, 200, 12).astype(np.float32)])
    if dtype == "bool":
        return rng.integers(0, 2, 32).astype(np.bool_)
    info = np.iinfo(np.dtype(dtype))
    ints = rng.integers(info.min, int(info.max) + 1, 26, dtype=np.int64)
    return np.concatenate([ints, [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, 255]]).astype(dtype)


def test_every_pair_c_matches_reference():
    rng = np.random.default_rng(0)
    pairs = [(a, b) for a, b in itertools.product(DTYPES, DTYPES) if a != b]
    cases, feed = [], {}
    for k, (src, dst) in enumerate(pairs):
        cases.append(lambda b, p, src=src, dst=dst: b.node("Cast", [b.input(f"{p}x", src, (32,))], to=dst))
        feed[f"c{k}_x"] = values(src, rng)
    g = graph_of_cases("cast", cases)
    assert_c_equals_reference(g, [feed])


@pytest.mark.parametrize("src,dst", [(a, b) for a, b in itertools.product(DTYPES, DTYPES) if a != b])
def test_in_range_values_match_onnxruntime(src, dst):
    rng = np.random.default_rng(1)
    x = values(src, rng)
    if src == "float32":  # in range of every target, finite
        x = np.float32([0, 0.4, -0.6, 1.5, -1.5, 7.9, -7.9, 100.2, 3])
        if dst in ("uint8", "bool"):
            x = np.abs(x)
    elif dst != "float32" and dst != "bool" and src != "bool":
        info = np.iinfo(np.dtype(dst))
        x = np.clip(x.astype(np.int64), max(info.min, -100), min(info.max, 100)).astype(src)
    b = GraphBuilder("cast1")
    y = b.node("Cast", [b.input("x", src, x.shape)], to=dst)
    g = b.output(y).build()
    to = helper.np_dtype_to_tensor_dtype(np.dtype(np.bool_ if dst == "bool" else dst))
    want = ort_node("Cast", {"x": x}, {"to": to}, opset=13)[0]
    np.testing.assert_array_equal(run_graph(g, {"x": x})[y], want)


def test_float_to_int_saturates_and_nan_is_zero():
    b = GraphBuilder("cast_sat")
    y = b.node("Cast", [b.input("x", "float32", (4,))], to="int8")
    g = b.output(y).build()
    out = run_graph(g, {"x": np.float32([300, -300, np.nan, -1.7])})[y]
    np.testing.assert_array_equal(out, np.int8([127, -128, 0, -1]))
