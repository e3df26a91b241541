"""Softplus: numpy reference against onnxruntime on [-30, 30] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_softplus_matches_onnxruntime_and_c():
    check_unary("Softplus", [{}], lo=-30, hi=30, opset=13)
