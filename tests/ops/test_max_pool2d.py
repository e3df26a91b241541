"""MaxPool2D: float32 against onnxruntime, int8 against TFLite Micro (one-op models), and the
generated C against the numpy reference."""

from __future__ import annotations

import pytest

import pool_testing as pt

OP = "MaxPool2D"


@pytest.mark.parametrize("shape,kernel,strides,pads", pt.FLOAT_CASES)
def test_float_matches_onnxruntime_and_c(shape, kernel, strides, pads):
    pt.check_float(OP, shape, kernel, strides, pads)


@pytest.mark.parametrize("activation", ["relu", "relu6", "relu_n1_to_1"])
def test_float_fused_activation(activation):
    pt.check_float(OP, (1, 6, 6, 3), (3, 3), (2, 2), (1, 1, 1, 1), activation)


@pytest.mark.parametrize("shape,kernel,strides,padding,activation,scale,zp,seed", [
    ((1, 8, 8, 4), (2, 2), (2, 2), "VALID", "none", 0.05, -3, 0),
    ((2, 7, 9, 3), (3, 3), (2, 2), "SAME", "none", 0.02, 5, 1),
    ((1, 6, 5, 2), (4, 3), (1, 2), "SAME", "relu", 0.1, -128, 2),
    ((1, 5, 5, 8), (3, 3), (1, 1), "SAME", "relu6", 0.03, 10, 3),
    ((1, 4, 4, 3), (2, 2), (1, 1), "VALID", "relu_n1_to_1", 0.01, 0, 4),
])
def test_int8_matches_tflm_and_c(shape, kernel, strides, padding, activation, scale, zp, seed):
    pt.check_int8(OP, shape, kernel, strides, padding, activation, scale, zp, seed)
