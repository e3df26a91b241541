"""Abs: numpy reference against onnxruntime on [-6, 6] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_abs_matches_onnxruntime_and_c():
    check_unary("Abs", [{}], lo=-6, hi=6, opset=13)
