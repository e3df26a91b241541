"""Sigmoid: float32 against onnxruntime, int8 on all 256 inputs against TFLite Micro's LOGISTIC
(random input quantizations), and the generated C (a 256-entry table) against the reference."""

from __future__ import annotations

import numpy as np
import pytest

import unary_testing as ut
from codegen.errors import KilnError
from codegen.ir import Quant
from helpers import build_graph

OP = "Sigmoid"


def test_float_matches_onnxruntime_and_c():
    ut.check_float(OP, "Sigmoid")


@pytest.mark.parametrize("seed", range(5))
def test_int8_matches_tflm_on_all_inputs(seed):
    qi = ut.rand_quant(np.random.default_rng(seed))
    if seed == 0:
        qi = (0.1, 0)  # a wide input range: both saturated ends are reached
    ut.check_int8_table(OP, "LOGISTIC", qi, (1.0 / 256, -128), seed=seed)


def test_int8_output_quantization_must_be_tflm_format():
    g = ut.unary_graph(OP, (4,), "int8", Quant.of(0.1, 0), Quant.of(1.0 / 256, 0))
    with pytest.raises(KilnError, match="scale 0.00390625 and zero point -128"):
        build_graph(g)
