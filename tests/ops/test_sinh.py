"""Sinh: numpy reference against onnxruntime on [-8, 8] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_sinh_matches_onnxruntime_and_c():
    check_unary("Sinh", [{}], lo=-8, hi=8, opset=13)
