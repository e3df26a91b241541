"""Output comparison of `kiln verify` (codegen/verify/compare.py)."""

from __future__ import annotations

import numpy as np

from codegen.verify.compare import compare_output, format_lsb_counts, merge_reports


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


def test_a_tiny_float_output_is_not_failed_on_its_last_bits():
    """A sigmoid output of 3e-4 differing by 1.6e-8: relative 5e-5 of the output, but far below
    float32's resolution near 1 (the absolute floor)."""
    assert compare_output("y", np.float32([3e-4 + 1.6e-8]), np.float32([3e-4])).ok
    assert not compare_output("y", np.float32([3e-4 + 1e-5]), np.float32([3e-4])).ok


def test_dequantized_outputs_are_judged_in_steps_of_their_scale():
    step = np.float32(0.0235)
    ref = np.float32([0, 1, 2, 3, -4]) * step
    got = np.float32([0, 2, 2, 5, -4]) * step  # one element off by 1 step, one by 2
    strict = compare_output("y", got, ref, lsb=float(step), tolerance_lsb=0)
    assert (strict.mismatches, strict.max_lsb, strict.elements_off) == (2, 2, 2)
    assert strict.lsb_counts == ((1, 1), (2, 1))
    one = compare_output("y", got, ref, lsb=float(step), tolerance_lsb=1)
    assert one.mismatches == 1 and not one.ok
    assert compare_output("y", got, ref, lsb=float(step), tolerance_lsb=2).ok


def test_int8_outputs_in_lsb_and_merged_over_samples():
    a = compare_output("y", np.int8([1, 2, 3]), np.int8([1, 3, 4]), lsb=1.0, tolerance_lsb=1)
    b = compare_output("y", np.int8([-128, 0]), np.int8([127, 0]), lsb=1.0, tolerance_lsb=1)
    merged = merge_reports([a, b])
    assert a.ok and not b.ok
    assert merged.lsb_counts == ((1, 2), (255, 1)) and merged.mismatches == 1 and merged.elements == 5
    assert format_lsb_counts(merged) == "2 elements off by 1 LSB, 1 by 255 LSB"
