"""Reciprocal: numpy reference against onnxruntime on [0.05, 20] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_reciprocal_matches_onnxruntime_and_c():
    check_unary("Reciprocal", [{}], lo=0.05, hi=20, opset=13)
