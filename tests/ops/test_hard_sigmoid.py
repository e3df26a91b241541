"""HardSigmoid: numpy reference against onnxruntime on [-6, 6] (default attributes and alpha=0.5, beta=0.6), generated C against
the reference."""

from float_unary_testing import check_unary


def test_hard_sigmoid_matches_onnxruntime_and_c():
    check_unary("HardSigmoid", [{}, {'alpha': 0.5, 'beta': 0.6}], lo=-6, hi=6, opset=13)
