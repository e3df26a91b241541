"""Comparison of generated-code outputs with a reference.

Quantized outputs are judged in LSB of their output scale (the step of the int8 grid they sit
on, or 1 for the integers themselves): two int8 implementations that round one value on either
side of a boundary differ by exactly one LSB, whatever the scale, so a float tolerance says
nothing about them. Other integers are exact. Other floats are relative to the output's
magnitude, with an absolute floor for outputs whose magnitude is itself tiny.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOAT_RTOL = 1e-5  # DESIGN.md: float32 within 1e-5 relative
# Below this an output is tiny, not inexact: a sigmoid output of 3e-4 differing by 1.6e-8 (the
# last bits of exp) is fine. 8 ULP of 1.0 in float32.
FLOAT_ATOL = 8 * float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class OutputReport:
    name: str
    dtype: str
    max_abs_error: float
    max_rel_error: float  # max abs error / max |reference| of that output
    mismatches: int  # elements outside tolerance
    elements: int
    lsb: float | None = None  # quantized output: its step (1 for the integers themselves)
    tolerance_lsb: int = 0
    lsb_counts: tuple[tuple[int, int], ...] = ()  # (LSB off, elements) for every distance > 0

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    @property
    def max_lsb(self) -> int:
        return max((d for d, _ in self.lsb_counts), default=0)

    @property
    def elements_off(self) -> int:
        return sum(n for _, n in self.lsb_counts)


def _lsb_distances(got: np.ndarray, ref: np.ndarray, lsb: float) -> np.ndarray:
    """|got - ref| in steps of `lsb`, to the nearest step (dequantized values are exact
    multiples of the step up to float rounding)."""
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    with np.errstate(invalid="ignore"):
        steps = np.rint(diff / lsb)
    return np.where(np.isnan(diff), np.iinfo(np.int32).max, steps).astype(np.int64)


def compare_output(name: str, got: np.ndarray, ref: np.ndarray, *, lsb: float | None = None,
                   tolerance_lsb: int = 0) -> OutputReport:
    """`lsb`: the output is quantized with that step (see module doc); else exact integers or
    relative floats."""
    got = np.asarray(got).reshape(-1)
    ref = np.asarray(ref).reshape(-1)
    if got.shape != ref.shape:
        return OutputReport(name, str(ref.dtype), float("inf"), float("inf"), ref.size, ref.size, lsb,
                            tolerance_lsb)
    if lsb is not None:
        steps = _lsb_distances(got, ref, lsb)
        mx = float(np.abs(got.astype(np.float64) - ref.astype(np.float64)).max()) if got.size else 0.0
        finite = np.abs(ref[np.isfinite(ref)]) if got.size else ref
        scale = max(float(finite.max()) if finite.size else 0.0, float(np.finfo(np.float32).tiny))
        dist, count = np.unique(steps[steps > 0], return_counts=True)
        return OutputReport(name, str(ref.dtype), mx, mx / scale, int(np.count_nonzero(steps > tolerance_lsb)),
                            ref.size, lsb, tolerance_lsb, tuple(zip(dist.tolist(), count.tolist())))
    if np.issubdtype(ref.dtype, np.floating):
        # equal infinities (ReduceMax over nothing is -inf) and NaN against NaN agree
        same = (got == ref) | (np.isnan(got) & np.isnan(ref))
        with np.errstate(invalid="ignore"):
            diff = np.where(same, 0.0, np.abs(got.astype(np.float64) - ref.astype(np.float64)))
        finite = np.abs(ref[np.isfinite(ref)])
        scale = max(float(finite.max()) if finite.size else 0.0, float(np.finfo(np.float32).tiny))
        # Relative to the output's magnitude: elementwise relative error is meaningless for
        # values near zero (softmax tails), where summation order alone moves the last bits.
        bad = int(np.count_nonzero(~(diff <= max(FLOAT_RTOL * scale, FLOAT_ATOL))))
        mx = float(diff.max()) if diff.size else 0.0
        return OutputReport(name, str(ref.dtype), mx, mx / scale, bad, ref.size)
    diff = np.abs(got.astype(np.int64) - ref.astype(np.int64))
    mx = float(diff.max()) if diff.size else 0.0
    return OutputReport(name, str(ref.dtype), mx, mx, int(np.count_nonzero(diff)), ref.size)


def merge_reports(reports: list[OutputReport]) -> OutputReport:
    """One report per output name over many samples: worst error, total mismatches, LSB
    distances summed."""
    first = reports[0]
    counts: dict[int, int] = {}
    for r in reports:
        for d, n in r.lsb_counts:
            counts[d] = counts.get(d, 0) + n
    return OutputReport(first.name, first.dtype, max(r.max_abs_error for r in reports),
                        max(r.max_rel_error for r in reports), sum(r.mismatches for r in reports),
                        sum(r.elements for r in reports), first.lsb, first.tolerance_lsb,
                        tuple(sorted(counts.items())))


def format_lsb_counts(report: OutputReport) -> str:
    """'all exact' or '3 elements off by 1 LSB, 1 by 2 LSB'."""
    if not report.lsb_counts:
        return "all elements exact"
    parts = [f"{n} {'element' if n == 1 else 'elements'} off by {d} LSB" if k == 0 else f"{n} by {d} LSB"
             for k, (d, n) in enumerate(report.lsb_counts)]
    return ", ".join(parts)
