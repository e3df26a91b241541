"""ReduceProd: the reference against onnxruntime over several axes and keepdims, the generated
C against the reference."""

from reduce_testing import check_reduce


def test_reduce_prod_matches_onnxruntime_and_c():
    check_reduce("ReduceProd", lo=0.5, hi=1.5)
