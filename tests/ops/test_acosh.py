"""Acosh: numpy reference against onnxruntime on [1, 20] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_acosh_matches_onnxruntime_and_c():
    check_unary("Acosh", [{}], lo=1, hi=20, opset=13)
