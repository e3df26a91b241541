"""Log: numpy reference against onnxruntime on [0.001, 50] (default attributes), generated C against
the reference."""

from float_unary_testing import check_unary


def test_log_matches_onnxruntime_and_c():
    check_unary("Log", [{}], lo=0.001, hi=50, opset=13)
