"""Xor: the reference against onnxruntime on broadcasts of bool inputs, the generated
C against the reference (bool outputs bit for bit)."""

import pytest

from float_binary_testing import check_binary


@pytest.mark.parametrize("dtype", ["bool"])
def test_logical_xor_matches_onnxruntime_and_c(dtype):
    # small integer ranges, so that equal pairs occur
    check_binary("Xor", "Xor", lo=-3, hi=3, dtype=dtype)
