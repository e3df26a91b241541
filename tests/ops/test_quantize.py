"""Quantize: float32 -> int8 against TFLite Micro's QUANTIZE (AffineQuantize: roundf, halves
away from zero, saturation), int8 -> int8 on all 256 inputs against TFLM's requantizing
QUANTIZE, and the generated C against the numpy reference, bit for bit.

(onnxruntime's QuantizeLinear rounds halves to even, so it is not the reference here.)
"""

from __future__ import annotations

import numpy as np
import pytest

import unary_testing as ut
from codegen.ir import Quant, run_graph
from op_testing import assert_c_equals_reference

OP = "Quantize"


@pytest.mark.parametrize("seed", range(4))
def test_float_to_int8_matches_tflm_and_c(seed):
    rng = np.random.default_rng(seed)
    scale, zp = ut.rand_quant(rng)
    s = np.float32(scale)
    n = 512
    x = np.concatenate([
        rng.standard_normal(n).astype(np.float32) * s * 100,           # mostly in range
        (np.arange(-64, 64, dtype=np.float32) + np.float32(0.5)) * s,  # exact halves
        np.float32([0.0, -0.0, 1e30, -1e30, 3e38, -3e38]),             # saturation
    ]).astype(np.float32)
    x = x[: (x.size // 8) * 8].reshape(8, -1)
    g = ut.unary_graph(OP, x.shape, "float32", None, Quant.of(scale, zp))
    want = ut.tflite_unary("QUANTIZE", None, (scale, zp), x, in_dtype="float32")
    got = run_graph(g, {"x": x})[g.outputs[0]]
    np.testing.assert_array_equal(got, want)
    out = assert_c_equals_reference(g, [{"x": x}])
    np.testing.assert_array_equal(out[0][g.outputs[0]], want)


def test_float_to_int8_nan_and_infinities_saturate():
    x = np.float32([np.nan, np.inf, -np.inf, 1.0]).reshape(1, 4)
    g = ut.unary_graph(OP, x.shape, "float32", None, Quant.of(0.1, 3))
    got = run_graph(g, {"x": x})[g.outputs[0]]
    assert got.ravel().tolist() == [-128, 127, -128, 13]
    assert_c_equals_reference(g, [{"x": x}])


@pytest.mark.parametrize("seed", range(4))
def test_int8_requantize_matches_tflm_on_all_inputs(seed):
    rng = np.random.default_rng(seed)
    qi, qo = ut.rand_quant(rng), ut.rand_quant(rng)
    if seed == 0:
        qo = qi  # identity
    ut.check_int8_table(OP, "QUANTIZE", qi, qo, seed=seed)
