"""Output comparison of `kiln verify` (codegen/verify/compare.py)."""

from __future__ import annotations

import numpy as np

from codegen.verify.compare import compare_output


def test_floats_within_1e5_of_the_largest_reference_value_match():
    report = compare_output("y", np.float32([100.0005, 0.0]), np.float32([100.0, 0.0008]))
    assert report.ok and report.max_abs_error > 0


def test_equal_infinities_and_nan_against_nan_match():
    """ReduceMax over an empty axis is -inf on both sides: inf - inf must not count as an error."""
    inf = np.float32(np.inf)
    report = compare_output("y", np.float32([-inf, inf, np.nan, 3.0]), np.float32([-inf, inf, np.nan, 3.0]))
    assert report.ok and report.max_abs_error == 0.0


def test_opposite_infinities_nan_for_a_number_and_integer_steps_do_not():
    assert compare_output("y", np.float32([np.inf, 1]), np.float32([-np.inf, 1])).mismatches == 1
    assert compare_output("y", np.float32([np.nan, 1]), np.float32([2, 1])).mismatches == 1
    assert compare_output("y", np.int8([1, 2, 3]), np.int8([1, 2, 4])).mismatches == 1
    assert compare_output("y", np.float32([1, 2]), np.float32([1, 2, 3])).mismatches == 3
