"""Unique: the generated C (ASan/UBSan) against onnxruntime and onnx's reference: sorted and
in order of first occurrence, flattened and along an axis (negative too), with ties, all-equal
and all-distinct inputs, integers over their range; the four outputs in their actual shapes."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder
from data_shaped_testing import assert_same, onnx_reference, run_bounded
from float_binary_testing import ort_node
from helpers import build_graph

CASES = [(None, True), (None, False), (0, True), (-1, True), (1, False)]


def _expected(x: np.ndarray, axis, sorted_: bool) -> list[np.ndarray]:
    attrs = {"sorted": int(sorted_), **({} if axis is None else {"axis": axis})}
    want = ort_node("Unique", {"x": x}, attrs, opset=11, n_out=4)
    if sorted_ or x.ndim == 1 or axis == 0:  # onnx's reference takes unsorted slices along axis 0 only
        for w, r in zip(want, onnx_reference("Unique", {"x": x}, 4, **attrs)):
            assert_same(w, r, "onnxruntime vs onnx reference")
    return want


def test_unique_of_floats_matches_onnxruntime():
    b = GraphBuilder("uq")
    x = b.input("x", "float32", (4, 3))
    nodes = [b.node("Unique", [x], axis=axis, sorted=s) for axis, s in CASES]
    g = b.output(*[o for outs in nodes for o in outs]).build()
    samples = [{"x": np.random.default_rng(seed).integers(-2, 3, (4, 3)).astype(np.float32)} for seed in range(3)]
    samples[0]["x"][1] = samples[0]["x"][3]  # a repeated row and column
    samples[0]["x"][:, 2] = samples[0]["x"][:, 0]
    samples += [{"x": np.zeros((4, 3), np.float32)}, {"x": np.arange(12, dtype=np.float32).reshape(4, 3)[::-1].copy()}]
    samples[3]["x"][0, 0] = -0.0  # equal to 0.0
    got = run_bounded(g, samples)
    for sample, out in zip(samples, got):
        for (axis, s), outs in zip(CASES, nodes):
            for name, want in zip(outs, _expected(sample["x"], axis, s)):
                assert_same(out[name], want, f"axis={axis} sorted={s} {name}")


@pytest.mark.parametrize("dtype", ["int8", "uint64", "int32", "bool"])
def test_unique_of_integers_matches_onnx_reference(dtype):
    b = GraphBuilder("uq_int")
    outs = b.node("Unique", [b.input("x", dtype, (7,))], sorted=True)
    g = b.output(*outs).build()
    if dtype == "bool":
        x = np.array([1, 0, 1, 1, 0, 0, 1], bool)
    else:
        info = np.iinfo(dtype)
        x = np.array([info.max, 3, info.min, 3, 0, info.max, 1], dtype)
    (out,) = run_bounded(g, [{"x": x}])
    for name, want in zip(outs, onnx_reference("Unique", {"x": x}, 4, sorted=1)):
        assert_same(out[name], want, name)


def test_unique_output_bounds():
    b = GraphBuilder("uq_bounds")
    outs = b.node("Unique", [b.input("x", "float32", (2, 5, 3))], axis=-2)
    res = build_graph(b.output(*outs).build())
    marks = [(o["shape"], o.get("length_axis"), o.get("max_length")) for o in res.manifest["outputs"]]
    assert marks == [([2, 5, 3], 1, 5), ([5], 0, 5), ([5], None, None), ([5], 0, 5)]


def test_unique_bad_axis_is_refused():
    b = GraphBuilder("uq_axis")
    with pytest.raises(KilnError, match="axis 2 out of range"):
        b.node("Unique", [b.input("x", "float32", (2, 2))], axis=2)


def test_unique_nan_and_signed_zero_as_numpy():
    """NaNs are one entry sorted last, -0.0 equals 0.0 (the first occurrence stands for both)."""
    b = GraphBuilder("uq_nan")
    outs = b.node("Unique", [b.input("x", "float32", (8,))], sorted=True)
    g = b.output(*outs).build()
    x = np.array([np.nan, 1, np.nan, -0.0, 0.0, np.inf, -np.inf, 1], np.float32)
    (out,) = run_bounded(g, [{"x": x}])
    for name, want in zip(outs, onnx_reference("Unique", {"x": x}, 4, sorted=1)):
        assert_same(out[name], want, name)
    assert np.signbit(out[outs[0]][1])
