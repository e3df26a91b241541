"""Exp: numpy reference against onnxruntime on [-20, 20] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_exp_matches_onnxruntime_and_c():
    check_unary("Exp", [{}], lo=-20, hi=20, opset=13)
