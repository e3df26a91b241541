"""Erf: numpy reference against onnxruntime on [-4, 4] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_erf_matches_onnxruntime_and_c():
    check_unary("Erf", [{}], lo=-4, hi=4, opset=13)
