"""Clip: float32 against onnxruntime (Clip, Relu), int8 on all 256 inputs against TFLite Micro's
RELU (any quantizations) and RELU6 (equal quantizations), and against LiteRT's RELU_N1_TO_1 and
RELU6 with differing quantizations (TFLM has no RELU_N1_TO_1, and its RELU6 ignores the
output quantization); the generated C (a 256-entry table) against the numpy reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

import unary_testing as ut
from codegen.errors import KilnError
from helpers import build_graph

OP = "Clip"


@pytest.mark.parametrize("lo,hi", [(0.0, 6.0), (-1.0, 1.0), (-0.5, 2.5), (2.0, 1.0)])
def test_float_matches_onnxruntime_and_c(lo, hi):
    ut.check_float(OP, "Clip", {"min": lo, "max": hi},
                   initializers={"min": np.float32(lo), "max": np.float32(hi)})


def test_float_relu_matches_onnxruntime():
    ut.check_float(OP, "Relu", {"min": 0.0})


@pytest.mark.parametrize("seed", range(4))
def test_int8_relu_matches_tflm(seed):
    rng = np.random.default_rng(seed)
    ut.check_int8_table(OP, "RELU", ut.rand_quant(rng), ut.rand_quant(rng), {"min": 0.0}, seed=seed)


@pytest.mark.parametrize("seed", range(3))
def test_int8_relu6_matches_tflm(seed):
    q = ut.rand_quant(np.random.default_rng(seed))
    ut.check_int8_table(OP, "RELU6", q, q, {"min": 0.0, "max": 6.0}, seed=seed)


@pytest.mark.parametrize("builtin,lo,hi", [("RELU_N1_TO_1", -1.0, 1.0), ("RELU6", 0.0, 6.0)])
def test_int8_requantizing_clips_match_litert(builtin, lo, hi):
    rng = np.random.default_rng(7)
    for seed in range(3):
        ut.check_int8_table(OP, builtin, ut.rand_quant(rng), ut.rand_quant(rng),
                            {"min": lo, "max": hi}, runner="litert", seed=seed)


def test_nan_bound_is_refused():
    g = ut.unary_graph(OP, (2, 2), "float32", min=math.nan)
    with pytest.raises(KilnError, match="must be numbers"):
        build_graph(g)
