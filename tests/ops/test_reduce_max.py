"""ReduceMax: the reference against onnxruntime over several axes and keepdims, the generated
C against the reference."""

from reduce_testing import check_reduce


def test_reduce_max_matches_onnxruntime_and_c():
    check_reduce("ReduceMax")
