"""Atanh: numpy reference against onnxruntime on [-0.99, 0.99] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_atanh_matches_onnxruntime_and_c():
    check_unary("Atanh", [{}], lo=-0.99, hi=0.99, opset=13)
