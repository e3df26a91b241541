"""Sub: float32 against onnxruntime, int8 against TFLite Micro one-op models, and the
generated C against the numpy reference."""

from __future__ import annotations

import pytest

import binary_testing as bt

OP = "Sub"


@pytest.mark.parametrize("sa,sb", bt.SHAPES)
def test_float_matches_onnxruntime(sa, sb):
    bt.check_float(OP, sa, sb, "none")


@pytest.mark.parametrize("activation", bt.ACTIVATIONS[1:])
def test_float_fused_activation(activation):
    bt.check_float(OP, (1, 4, 4, 8), (1, 1, 1, 8), activation)


@pytest.mark.parametrize("k,sa_sb", list(enumerate(bt.SHAPES)))
def test_int8_matches_tflm(k, sa_sb):
    bt.check_int8(OP, *sa_sb, "none", seed=100 + k)


@pytest.mark.parametrize("k,activation", list(enumerate(bt.ACTIVATIONS)))
def test_int8_fused_activation(k, activation):
    bt.check_int8(OP, (1, 4, 4, 8), (1, 1, 1, 8), activation, seed=200 + k)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_generated_c_equals_reference(dtype):
    bt.check_c(OP, dtype)
