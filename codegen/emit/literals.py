"""Exact C literals for numbers: shortest round-trip floats, integers that never warn."""

from __future__ import annotations

import math

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import STORAGE_FLOATS, np_dtype

# Infinity as a C constant expression without math.h: 1e39 is beyond float's range, and a
# conversion to float of a value beyond its range gives infinity on IEEE 754 targets (C99
# Annex F), which every target Kiln compiles for is.
C_INFINITY = "((float)1e39)"


def c_float(x: float) -> str:
    """The shortest decimal that reads back as the same float32, with an `f` suffix;
    infinities (and values that round to them) exactly, as C_INFINITY. NaN has no constant
    expression: refused (constants with NaN are refused on import)."""
    if math.isnan(float(x)):
        raise ValueError("NaN cannot be written as a C constant")
    with np.errstate(over="ignore"):
        f = np.float32(x)
    if np.isinf(f):
        return C_INFINITY if f > 0 else f"(-{C_INFINITY})"
    return np.format_float_scientific(f, unique=True, trim="0", exp_digits=2) + "f"


def c_int(x: int) -> str:
    """An integer literal; INT32_MIN and INT64_MIN are written so that no compiler warns."""
    x = int(x)
    if x == -(2**31):
        return "(-2147483647 - 1)"
    if x == -(2**63):
        return "(-9223372036854775807LL - 1)"
    if x >= 2**63:
        return f"{x}ULL"
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


def c_api_values(data: np.ndarray, dtype: str) -> list[str]:
    """`data` as the literals a caller passes through the C API for `dtype` (narrow floats as
    their bit patterns, float64 as double literals), lines of comma-separated values."""
    flat = np.ascontiguousarray(np.asarray(data).astype(np_dtype(dtype))).reshape(-1)
    if dtype == "float64":
        if not np.all(np.isfinite(flat)):
            raise KilnError("a float64 input can be specialised to finite values only")
        items = [repr(float(v)) for v in flat.tolist()]
        return [", ".join(items[i:i + 8]) for i in range(0, len(items), 8)]
    if dtype in STORAGE_FLOATS:  # bit patterns in an unsigned integer of the same width
        return c_array_values(flat.view(f"uint{8 * flat.itemsize}"), "uint64")
    return c_array_values(flat, dtype)
