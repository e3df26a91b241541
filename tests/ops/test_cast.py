"""Cast: every pair of Kiln's dtypes, the reference against onnxruntime on in-range values
and the generated C against the reference on all values (saturating float -> integer,
wrapping integer narrowing, NaN and infinities)."""

import itertools

import ml_dtypes
import numpy as np
import pytest
from onnx import helper
from onnx.reference.ops.op_cast import cast_to

from codegen.ir import GraphBuilder, run_graph
from codegen.ir.types import np_dtype
from codegen.ops.cast import FLOATS, SATURATING, TYPE_CODES
from float_binary_testing import ort_node
from helpers import run_c

DTYPES = list(TYPE_CODES)
ORT_DTYPES = ["float32", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"]
NARROW = [d for d in FLOATS if d not in ("float32", "float64")]
EDGE = np.float32([0, -0.0, 0.4, -0.6, 1.5, -1.5, 127.9, -128.9, 255.5, 300, -300, 40000, -40000, 3e9, -3e9,
                   1e19, -1e19, np.inf, -np.inf, np.nan])


def values(dtype: str, rng) -> np.ndarray:
    if dtype == "float32":
        return np.concatenate([EDGE, rng.uniform(-200, 200, 12).astype(np.float32)])
    if dtype in FLOATS:  # the float32 values as the format holds them
        with np.errstate(all="ignore"):
            return values("float32", rng).astype(np_dtype(dtype))
    if dtype == "bool":
        return rng.integers(0, 2, 32).astype(np.bool_)
    info = ml_dtypes.iinfo(np_dtype(dtype))
    ints = rng.integers(int(info.min), int(info.max) + 1, 26, dtype=np.uint64 if dtype == "uint64" else np.int64)
    edges = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, min(255, int(info.max))]
    return np.concatenate([ints, np.array(edges, ints.dtype)]).astype(np_dtype(dtype))


def assert_same_elements(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal values, NaN matching NaN, the sign of zero included (narrow floats compared as float32)."""
    assert got.dtype == want.dtype, what
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g, w = got.astype(np.float32), want.astype(np.float32)
    same = ((g == w) & (np.signbit(g) == np.signbit(w))) | (np.isnan(g) & np.isnan(w))
    assert same.all(), f"{what}: {g[~same][:4]} != {w[~same][:4]}"


FAST_SOURCES = ("float32", "float16", "int64", "uint64", "int4", "float8e4m3fnuz")


@pytest.mark.parametrize("src", [s if s in FAST_SOURCES else pytest.param(s, marks=pytest.mark.slow)
                                 for s in DTYPES])
def test_every_pair_c_matches_reference(src):
    """From `src` to each of the other 21 dtypes: the generated C gives the numpy reference's elements."""
    rng = np.random.default_rng(DTYPES.index(src))
    dsts = [d for d in DTYPES if d != src]
    b = GraphBuilder(f"cast_{src}")
    x = b.input("x", src, (32,))
    outs = [b.node("Cast", [x], to=dst) for dst in dsts]
    g = b.output(*outs).build()
    feed = {"x": values(src, rng)}
    got = run_c(g, [feed])[0]
    want = run_graph(g, feed)
    for dst, out in zip(dsts, outs):
        assert_same_elements(got[out], want[out], f"{src} -> {dst}")


@pytest.mark.parametrize("saturate", [True, False])
def test_narrow_floats_match_onnx_reference_bit_for_bit(saturate):
    """float32 -> each narrow format (float16, bfloat16, float8, float4) and back: rounding
    to nearest even, subnormals, overflow, infinities and NaN as onnx's reference Cast
    (ml_dtypes) has them, on random bit patterns and on every code of the format."""
    rng = np.random.default_rng(3)
    x = np.concatenate([EDGE, np.float32([448, 464, 480, 57344, 61440, 65504, 65520, 240, 248, 6, 7, 0.25, 1e-45]),
                        rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    b = GraphBuilder("narrow")
    xin = b.input("x", "float32", x.shape)
    feed, encoded, decoded = {"x": x}, [], []
    for dtype in NARROW:
        encoded.append(b.node("Cast", [xin], to=dtype, saturate=saturate))
        bits = 16 if np_dtype(dtype).itemsize == 2 else (4 if dtype == "float4e2m1" else 8)
        feed[f"codes_{dtype}"] = np.arange(2**bits).astype(np.uint16 if bits == 16 else np.uint8).view(np_dtype(dtype))
        decoded.append(b.node("Cast", [b.input(f"codes_{dtype}", dtype, (2**bits,))], to="float32"))
    g = b.output(*encoded, *decoded).build()
    got = run_c(g, [feed])[0]
    for dtype, enc, dec in zip(NARROW, encoded, decoded):
        with np.errstate(all="ignore"):
            want = cast_to(x, helper.np_dtype_to_tensor_dtype(np_dtype(dtype)), saturate and dtype in SATURATING)
        assert_same_elements(got[enc], np.asarray(want), f"float32 -> {dtype}")
        assert_same_elements(got[dec], feed[f"codes_{dtype}"].astype(np.float32), f"{dtype} -> float32")


@pytest.mark.parametrize("src,dst", [(a, b) for a, b in itertools.product(ORT_DTYPES, ORT_DTYPES) if a != b])
def test_in_range_values_match_onnxruntime(src, dst):
    rng = np.random.default_rng(1)
    x = values(src, rng)
    if src == "float32":  # in range of every target, finite
        x = np.float32([0, 0.4, -0.6, 1.5, -1.5, 7.9, -7.9, 100.2, 3])
        if dst.startswith("uint") or dst == "bool":
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
