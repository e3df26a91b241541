"""ArgMin: the reference against onnxruntime over axes, keepdims and select_last_index on
data with ties, the generated C against the reference."""

from reduce_testing import check_arg


def test_argmin_matches_onnxruntime_and_c():
    check_arg("ArgMin")
