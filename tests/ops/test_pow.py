"""Pow: the reference against onnxruntime on positive bases (any exponent sign), the C
against the reference."""

from float_binary_testing import check_binary


def test_pow_matches_onnxruntime_and_c():
    check_binary("Pow", "Pow", lo=0.1, hi=3.0, b_lo=0.0, b_hi=3.0)
