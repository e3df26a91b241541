"""Exact C literals for numbers: shortest round-trip floats, integers that never warn."""

from __future__ import annotations

import math

import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)


def c_float(x: float) -> str:
    """The shortest decimal that reads back as the same float32, with an `f` suffix.

    Infinities become ±FLT_MAX: activation bounds are the only infinities Kiln writes,
    and clamping to FLT_MAX is the same as not clamping for finite data.
    """
    x = float(x)
    if math.isnan(x):
        raise ValueError("NaN cannot be written as a C constant")
    x = max(-FLT_MAX, min(FLT_MAX, x))
    text = np.format_float_scientific(np.float32(x), unique=True, trim="0", exp_digits=2)
    return text + "f"


def c_int(x: int) -> str:
    """An integer literal; INT32_MIN and INT64_MIN are written so that no compiler warns."""
    x = int(x)
    if x == -(2**31):
        return "(-2147483647 - 1)"
    if x == -(2**63):
        return "(-9223372036854775807LL - 1)"
    if abs(x) >= 2**31:
        return f"{x}LL"
    return str(x)


def c_array_values(data: np.ndarray, dtype: str, per_line: int = 16) -> list[str]:
    """The initializer of a constant array, as lines of comma-separated literals."""
    flat = data.reshape(-1)
    if dtype == "float32":
        items = [c_float(v) for v in flat.tolist()]
        per_line = 8
    elif dtype == "bool":
        items = ["1" if v else "0" for v in flat.tolist()]
    else:
        items = [c_int(v) for v in flat.tolist()]
    return [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
