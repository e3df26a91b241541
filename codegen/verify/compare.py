"""Comparison of generated-code outputs with a reference: exact for integers, relative for floats."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOAT_RTOL = 1e-5  # DESIGN.md: float32 within 1e-5 relative


@dataclass(frozen=True)
class OutputReport:
    name: str
    dtype: str
    max_abs_error: float
    max_rel_error: float  # max abs error / max |reference| of that output
    mismatches: int  # elements outside tolerance
    elements: int

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


def compare_output(name: str, got: np.ndarray, ref: np.ndarray) -> OutputReport:
    got = np.asarray(got).reshape(-1)
    ref = np.asarray(ref).reshape(-1)
    if got.shape != ref.shape:
        return OutputReport(name, str(ref.dtype), float("inf"), float("inf"), ref.size, ref.size)
    if np.issubdtype(ref.dtype, np.floating):
        # equal infinities (ReduceMax over nothing is -inf) and NaN against NaN agree
        same = (got == ref) | (np.isnan(got) & np.isnan(ref))
        with np.errstate(invalid="ignore"):
            diff = np.where(same, 0.0, np.abs(got.astype(np.float64) - ref.astype(np.float64)))
        finite = np.abs(ref[np.isfinite(ref)])
        scale = max(float(finite.max()) if finite.size else 0.0, float(np.finfo(np.float32).tiny))
        # Relative to the output's magnitude: elementwise relative error is meaningless for
        # values near zero (softmax tails), where summation order alone moves the last bits.
        bad = int(np.count_nonzero(~(diff <= FLOAT_RTOL * scale)))
        mx = float(diff.max()) if diff.size else 0.0
        return OutputReport(name, str(ref.dtype), mx, mx / scale, bad, ref.size)
    diff = np.abs(got.astype(np.int64) - ref.astype(np.int64))
    mx = float(diff.max()) if diff.size else 0.0
    return OutputReport(name, str(ref.dtype), mx, mx, int(np.count_nonzero(diff)), ref.size)


def merge_reports(reports: list[OutputReport]) -> OutputReport:
    """One report per output name over many samples: worst error, total mismatches."""
    first = reports[0]
    return OutputReport(first.name, first.dtype, max(r.max_abs_error for r in reports),
                        max(r.max_rel_error for r in reports), sum(r.mismatches for r in reports),
                        sum(r.elements for r in reports))
