"""Tan: numpy reference against onnxruntime on [-1.4, 1.4] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_tan_matches_onnxruntime_and_c():
    check_unary("Tan", [{}], lo=-1.4, hi=1.4, opset=13)
