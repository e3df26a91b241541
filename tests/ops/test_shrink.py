"""Shrink: numpy reference against onnxruntime on [-6, 6] (default attributes and lambd=1.5, bias=0.5), generated C against
the reference."""

from float_unary_testing import check_unary


def test_shrink_matches_onnxruntime_and_c():
    check_unary("Shrink", [{}, {'lambd': 1.5, 'bias': 0.5}], lo=-6, hi=6, opset=13)
