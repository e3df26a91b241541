"""The metrics `kiln verify` prints per output, as `stm32ai validate` does: over every sample,
the largest absolute error, the l2 relative error ||got - ref|| / ||ref||, the cosine similarity
and, for a classifier's scores (one vector per sample), how often the top-1 class agrees.

Quantized outputs are compared in real units (dequantized with the output's scale and zero
point, from the manifest) for these metrics, and in LSB of their scale for the pass/fail
verdict (codegen/verify/compare.py, --tolerance-lsb).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from codegen.verify.compare import OutputReport, format_lsb_counts


@dataclass(frozen=True)
class OutputMetrics:
    name: str
    dtype: str
    shape: tuple[int, ...]
    samples: int
    max_abs_error: float  # in real units (dequantized)
    l2_relative_error: float
    cosine: float
    top1_agree: int | None  # samples whose argmax agrees; None: not a classifier output
    report: OutputReport  # the verdict: LSB distances or float tolerance


def _real(values: np.ndarray, io: dict) -> np.ndarray:
    """Dequantized when the output is a quantized integer, else as float64."""
    x = np.asarray(values).astype(np.float64)
    if io["dtype"].startswith(("int", "uint")) and io.get("scale"):
        return (x - float(io.get("zero_point", 0))) * float(io["scale"])
    return x


def is_classifier(shape: tuple[int, ...]) -> bool:
    """One score vector per sample: [C] or [1, ..., 1, C] with C > 1."""
    return len(shape) >= 1 and shape[-1] > 1 and all(d == 1 for d in shape[:-1])


def output_metrics(io: dict, got: list[np.ndarray], ref: list[np.ndarray], report: OutputReport) -> OutputMetrics:
    g = np.concatenate([_real(a, io).reshape(-1) for a in got]) if got else np.zeros(0)
    r = np.concatenate([_real(a, io).reshape(-1) for a in ref]) if ref else np.zeros(0)
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    with np.errstate(invalid="ignore"):
        diff = np.where(same, 0.0, np.abs(g - r))
    ref_norm, got_norm = float(np.linalg.norm(r)), float(np.linalg.norm(g))
    err_norm = float(np.linalg.norm(diff))
    l2r = (0.0 if err_norm == 0 else math.inf) if ref_norm == 0 else err_norm / ref_norm
    if ref_norm == 0 or got_norm == 0:
        cosine = 1.0 if ref_norm == got_norm else 0.0
    else:
        cosine = float(np.dot(g, r) / (got_norm * ref_norm))
    shape = tuple(int(d) for d in io["shape"])
    top1 = None
    if is_classifier(shape):
        top1 = sum(int(np.argmax(np.asarray(a).reshape(-1)) == np.argmax(np.asarray(b).reshape(-1)))
                   for a, b in zip(got, ref))
    return OutputMetrics(io["name"], io["dtype"], shape, len(got), float(diff.max()) if diff.size else 0.0,
                         l2r, cosine, top1, report)


def format_metrics_table(metrics: list[OutputMetrics]) -> str:
    """The summary table: one row per output."""
    head = (f"  {'output':<20} {'dtype':<8} {'shape':<14} {'max abs err':>12} {'l2 rel err':>11} {'cosine':>10} "
            f"{'top-1':>9} {'LSB':>24}  result")
    lines = [head]
    for m in metrics:
        top1 = f"{m.top1_agree}/{m.samples}" if m.top1_agree is not None else "-"
        r = m.report
        lsb = f"{r.max_lsb} max, {r.elements_off} off (tol {r.tolerance_lsb})" if r.lsb is not None else "-"
        shape = "x".join(map(str, m.shape)) or "scalar"
        name = m.name if len(m.name) <= 20 else m.name[:19] + "~"
        lines.append(f"  {name:<20} {m.dtype:<8} {shape:<14} {m.max_abs_error:>12.4g} {m.l2_relative_error:>11.3g} "
                     f"{m.cosine:>10.6f} {top1:>9} {lsb:>24}  {'ok' if m.report.ok else 'MISMATCH'}")
    detail = [f"  {m.name}: {format_lsb_counts(m.report)}" for m in metrics if m.report.lsb is not None]
    return "\n".join(lines + detail) + "\n"
