"""int8 HARD_SWISH and RSQRT, which TFLite Micro computes with its own fixed-point steps and
Kiln tabulates at import (codegen/frontends/tflite/lut.py): every one of the 256 stored input
values, over scales and zero points that take each branch of TFLite Micro's arithmetic
(left- and right-shifted "relu-ish" factor, saturation at both ends), bit-exact with the
TFLite Micro interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.frontends.tflite import load_bytes
from codegen.ir import run_graph
from tflite_models import TensorSpec, run_tflm, single_op_model

ALL_STORED = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)


def _model(op: str, s_in: float, zp_in: int, s_out: float, zp_out: int) -> bytes:
    return single_op_model(op, [TensorSpec((1, 256), "int8", scale=s_in, zero_point=zp_in)],
                           [TensorSpec((1, 256), "int8", scale=s_out, zero_point=zp_out)])


def _kiln(model: bytes, x: np.ndarray) -> np.ndarray:
    g = load_bytes(model, name="t")
    return next(iter(run_graph(g, {g.inputs[0]: x}).values())).reshape(x.shape)


# (input scale, input zero point, output scale, output zero point)
HARD_SWISH = [(0.05, -3, 0.03, -100), (0.2, 10, 0.15, -110), (0.004, 0, 0.003, -128), (0.5, -128, 0.4, -20),
              (0.02, 127, 0.02, 0), (1.3, -5, 1.0, -120)]


@pytest.mark.parametrize("s_in,zp_in,s_out,zp_out", HARD_SWISH)
def test_hard_swish_int8_every_value(s_in, zp_in, s_out, zp_out):
    model = _model("HARD_SWISH", s_in, zp_in, s_out, zp_out)
    want = run_tflm(model, ALL_STORED)[0]
    np.testing.assert_array_equal(_kiln(model, ALL_STORED), want)


# RSQRT is defined from the zero point up: TFLite Micro stops with an error below it.
RSQRT = [(0.05, -128, 0.02, -128), (0.001, -100, 0.5, -128), (0.3, -128, 0.01, -128), (0.02, 0, 0.05, 3)]


@pytest.mark.parametrize("s_in,zp_in,s_out,zp_out", RSQRT)
def test_rsqrt_int8_every_defined_value(s_in, zp_in, s_out, zp_out):
    model = _model("RSQRT", s_in, zp_in, s_out, zp_out)
    x = np.resize(np.arange(zp_in, 128, dtype=np.int8), (1, 256))
    want = run_tflm(model, x)[0]
    np.testing.assert_array_equal(_kiln(model, x), want)
