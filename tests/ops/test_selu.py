"""Selu: numpy reference against onnxruntime on [-6, 6] (default attributes and alpha=2.0, gamma=3.0), generated C against
the reference."""

from float_unary_testing import check_unary


def test_selu_matches_onnxruntime_and_c():
    check_unary("Selu", [{}, {'alpha': 2.0, 'gamma': 3.0}], lo=-6, hi=6, opset=13)
