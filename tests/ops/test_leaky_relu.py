"""LeakyRelu: numpy reference against onnxruntime on [-6, 6] (default attributes and alpha=0.3), generated C against
the reference."""

from float_unary_testing import check_unary


def test_leaky_relu_matches_onnxruntime_and_c():
    check_unary("LeakyRelu", [{}, {'alpha': 0.3}], lo=-6, hi=6, opset=16)
