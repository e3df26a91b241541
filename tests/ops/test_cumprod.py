"""CumProd: every axis, exclusive and reverse against numpy, the generated C against the reference."""

from cumulative_testing import check_cumulative


def test_cumprod_matches_and_c():
    check_cumulative("CumProd")
