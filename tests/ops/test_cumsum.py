"""CumSum: every axis, exclusive and reverse against onnxruntime, the generated C against the reference."""

from cumulative_testing import check_cumulative


def test_cumsum_matches_and_c():
    check_cumulative("CumSum")
