"""Sqrt: numpy reference against onnxruntime on [0, 50] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_sqrt_matches_onnxruntime_and_c():
    check_unary("Sqrt", [{}], lo=0, hi=50, opset=13)
