"""Gelu: numpy reference against onnxruntime on [-6, 6] (default attributes and approximate=tanh), generated C against
the reference."""

from float_unary_testing import check_unary


def test_gelu_matches_onnxruntime_and_c():
    check_unary("Gelu", [{}, {'approximate': 'tanh'}], lo=-6, hi=6, opset=20)
