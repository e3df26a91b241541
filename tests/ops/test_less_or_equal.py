"""LessOrEqual: the reference against onnxruntime on broadcasts of float32, int32, int64 inputs, the generated
C against the reference (bool outputs bit for bit)."""

import pytest

from float_binary_testing import check_binary


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int16", "int32", "int64"])
def test_less_or_equal_matches_onnxruntime_and_c(dtype):
    # small integer ranges, so that equal pairs occur
    check_binary("LessOrEqual", "LessOrEqual", lo=0 if dtype == "uint8" else -3, hi=3, dtype=dtype)
