"""NonZero: the generated C (ASan/UBSan) against onnx's reference on random data with zeros,
-0.0 and NaN, all-zero and all-non-zero inputs, every element width; the C API of a
data-dependent length (header, manifest) and the error when the output feeds another op."""

import json

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder
from data_shaped_testing import assert_same, onnx_reference, run_bounded
from helpers import build_graph


def test_non_zero_of_floats_matches_onnx_reference():
    b = GraphBuilder("nz")
    y = b.node("NonZero", [b.input("x", "float32", (3, 2, 4))])
    g = b.output(y).build()
    samples = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x = rng.integers(-1, 2, (3, 2, 4)).astype(np.float32)
        x[0, 0, 0], x[1, 1, 1] = -0.0, np.nan  # -0.0 is zero, NaN is not
        samples.append({"x": x})
    samples += [{"x": np.zeros((3, 2, 4), np.float32)}, {"x": np.ones((3, 2, 4), np.float32)}]
    got = run_bounded(g, samples)
    for sample, out in zip(samples, got):
        assert_same(out[y], onnx_reference("NonZero", sample)[0], "NonZero")
    assert got[3][y].shape == (3, 0) and got[4][y].shape == (3, 24)


def test_non_zero_of_every_width_matches_onnx_reference():
    """bool, int8, uint16, int32 and int64 (extremes included) in one build."""
    dtypes = ["bool", "int8", "uint16", "int32", "int64"]
    b = GraphBuilder("nz_int")
    outs = [b.node("NonZero", [b.input(f"x_{d}", d, (5, 3))]) for d in dtypes]
    g = b.output(*outs).build()
    rng = np.random.default_rng(1)
    sample = {}
    for d in dtypes:
        x = rng.integers(0, 2, (5, 3)).astype(d)
        if d != "bool":
            x[0, 1] = np.iinfo(d).min if np.iinfo(d).min else np.iinfo(d).max
        sample[f"x_{d}"] = x
    (out,) = run_bounded(g, [sample])
    for d, name in zip(dtypes, outs):
        assert_same(out[name], onnx_reference("NonZero", {"x": sample[f"x_{d}"]})[0], d)


def test_non_zero_api_reports_the_bound_and_the_length():
    b = GraphBuilder("nz_api")
    y = b.node("NonZero", [b.input("x", "int8", (2, 5))])
    res = build_graph(b.output(y).build(), "det")
    header = res.files["det.h"]
    assert "#define DET_OUTPUT_0_LENGTH_AXIS 1" in header
    assert "#define DET_OUTPUT_0_MAX_LENGTH 10u" in header
    assert "int32_t *out_nonzero_1_length\n);" in header
    (out,) = json.loads(res.files["det.manifest.json"])["outputs"]
    assert (out["shape"], out["length_axis"], out["max_length"]) == ([2, 10], 1, 10)


def test_non_zero_feeding_another_op_is_refused():
    b = GraphBuilder("nz_fed")
    y = b.node("NonZero", [b.input("x", "float32", (4,))], name="nz")
    z = b.node("Reshape", [y], shape=(4,))
    with pytest.raises(KilnError, match="nz.*Kiln compiles it only as a graph output"):
        build_graph(b.output(z).build())


def test_non_zero_through_a_cast_keeps_its_length():
    """A unary elementwise op (the Cast to a declared output type) passes the length on."""
    b = GraphBuilder("nz_cast")
    y = b.node("Cast", [b.node("NonZero", [b.input("x", "uint8", (6,))])], to="int32")
    g = b.output(y).build()
    x = np.array([0, 7, 0, 0, 255, 1], np.uint8)
    (out,) = run_bounded(g, [{"x": x}])
    assert_same(out[y], onnx_reference("NonZero", {"x": x})[0].astype(np.int32), "cast")


def test_non_zero_reaching_two_outputs_is_refused():
    b = GraphBuilder("nz_two")
    nz = b.node("NonZero", [b.input("x", "float32", (4,))], name="nz")
    with pytest.raises(KilnError, match="reaches several graph outputs"):
        build_graph(b.output(nz, b.node("Cast", [nz], to="int32")).build())
