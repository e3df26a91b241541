"""BitCast: the bytes of one dtype read as another of the same width, as numpy's view; the
generated C both as a view inside the arena and as a copy into the caller's buffer."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from helpers import run_c
from op_testing import graph_of_cases

PAIRS = [("float32", "int32"), ("int32", "float32"), ("uint32", "int32"), ("int8", "uint8"), ("bool", "uint8"),
         ("uint16", "int16"), ("int64", "uint64"), ("uint8", "int8")]


def sample(dtype, rng):
    if dtype == "float32":
        return np.float32([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, 3.4e38, 1e-45])
    if dtype == "bool":
        return rng.integers(0, 2, 8).astype(np.bool_)
    info = np.iinfo(np.dtype(dtype))
    return np.concatenate([[info.min, info.max, 0, 1], rng.integers(0, int(info.max), 4)]).astype(dtype)


@pytest.mark.parametrize("src,dst", PAIRS)
def test_reference_is_numpy_view(src, dst):
    x = sample(src, np.random.default_rng(0))
    b = GraphBuilder("t")
    y = b.node("BitCast", [b.input("x", src, x.shape)], to=dst)
    got = run_graph(b.output(y).build(), {"x": x})[y]
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8))


def test_c_matches_reference():
    rng = np.random.default_rng(1)
    cases, feed = [], {}
    for k, (src, dst) in enumerate(PAIRS):
        # inside the arena (after a Reshape copy) the cast is a view; at the output, a copy
        cases.append(lambda b, p, src=src, dst=dst: b.node("BitCast", [b.node("Reshape", [
            b.input(f"{p}x", src, (8,))], shape=(2, 4))], to=dst))
        feed[f"c{k}_x"] = sample(src, rng)
    g = graph_of_cases("bit_cast", cases)
    (got,) = run_c(g, [feed])
    for name, want in run_graph(g, feed).items():  # bytes compared: some int32 patterns are NaNs
        assert got[name].dtype == want.dtype
        np.testing.assert_array_equal(got[name].view(np.uint8), want.view(np.uint8), err_msg=name)


def test_width_change_is_refused():
    b = GraphBuilder("t")
    with pytest.raises(KilnError, match="changes the element width"):
        b.node("BitCast", [b.input("x", "float32", (2,))], to="int64")
