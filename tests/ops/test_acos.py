"""Acos: numpy reference against onnxruntime on [-1, 1] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_acos_matches_onnxruntime_and_c():
    check_unary("Acos", [{}], lo=-1, hi=1, opset=13)
