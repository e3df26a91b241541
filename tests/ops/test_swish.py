"""Swish: numpy reference against onnxruntime on [-20, 20] (default attributes and alpha=2.0), generated C against
the reference."""

from float_unary_testing import check_unary


def test_swish_matches_onnxruntime_and_c():
    check_unary("Swish", [{}, {'alpha': 2.0}], lo=-20, hi=20, opset=24)
