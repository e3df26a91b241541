"""Recover int8 weights from float32 weights that are exactly int8 x scale (not a pass).

ONNX frontends compute every node with constant inputs at import time, so the weights of a
QDQ model (int8 initializer -> DequantizeLinear -> Conv) reach the IR as float32 arrays:
DequantizeLinear's float32 product q * scale, repacked to Kiln's layout. The int8 values
and one scale per output channel are found again exactly: for each channel, the scale is
max|w| / m for the m in 128..1 (from the largest) and the float32 neighbours of that
quotient for which every weight divided by it is an integer in [-128, 127] and
float32(q) * float32(scale) gives back every weight bit for bit. Any (q, scale) passing that
test describes the same float weights, so the int8 op computes what the float op computes.
Weights that are not on such a grid (a float model) are left alone (None).
"""

from __future__ import annotations

import numpy as np

_MS = np.arange(128, 0, -1, dtype=np.float64)  # candidate max |q|, largest first


def _row_scale(row: np.ndarray) -> tuple[np.ndarray, float] | None:
    """(q, scale) of one channel with float32(q) * float32(scale) == row, or None."""
    a = float(np.max(np.abs(row)))
    if a == 0.0:
        return np.zeros(row.shape, np.int8), 0.0
    ratios = np.abs(row.astype(np.float64))[None, :] / a * _MS[:, None]
    near = np.all(np.abs(ratios - np.rint(ratios)) < 1e-3, axis=1)
    for m in _MS[near]:
        base = np.float32(a) / np.float32(m)
        cands = [base]
        for direction in (np.inf, -np.inf):
            s = base
            for _ in range(3):
                s = np.nextafter(s, np.float32(direction))
                cands.append(s)
        for s in cands:
            if not s > 0:
                continue
            q = np.rint(row.astype(np.float64) / float(s))
            if q.min() < -128 or q.max() > 127:
                continue
            if np.array_equal(q.astype(np.float32) * np.float32(s), row):
                return q.astype(np.int8), float(s)
    return None


def exact_int8(data: np.ndarray, axis: int | None) -> tuple[np.ndarray, np.ndarray] | None:
    """(int8 array, float64 scales) with float32(q) * scale == data, one scale per index of
    `axis` (per tensor when None); None when the data is not int8 times such scales."""
    d = np.asarray(data)
    if d.dtype != np.float32 or d.size == 0:
        return None
    moved = np.moveaxis(d, axis, 0) if axis is not None else d.reshape(1, -1)
    rows = moved.reshape(moved.shape[0], -1)
    if axis is None:
        found = _row_scale(rows.reshape(-1))
        if found is None:
            return None
        q, s = found
        return q.reshape(d.shape), np.array([s if s > 0 else 1.0])
    qs, scales = [], []
    for row in rows:
        found = _row_scale(row)
        if found is None:
            return None
        qs.append(found[0])
        scales.append(found[1])
    scales = np.array(scales)
    nonzero = scales[scales > 0]
    # An all-zero channel takes any scale: the largest other one keeps its bias precise.
    scales[scales == 0] = nonzero.max() if nonzero.size else 1.0
    q = np.stack(qs).reshape(moved.shape)
    return np.ascontiguousarray(np.moveaxis(q, 0, axis)), scales
