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


# c_floats decides digit counts in float64 arithmetic; a decision closer to its boundary than
# these margins (relative error of a scaled value is below 2^-50) goes to c_float instead.
_HALF_MARGIN = 1e-5   # |fraction of the scaled value - 0.5|: a possible tie or misrounding
_EDGE_MARGIN = 1e-4   # |distance to the candidate - half gap|, in units of the last digit
_CHUNK = 1 << 16      # elements per vectorised pass (bounds the temporaries)


def c_floats(values: np.ndarray) -> list[str]:
    """c_float of every element, vectorised: the same text, about five times faster on large
    weight arrays (printing float constants one by one dominated compiling large float models).

    For a float32 whose neighbours are equally far (every value but zero, infinities and powers
    of two), the shortest round-trip decimal with p significant digits is the value rounded to
    p digits, if anything with p digits is strictly inside the half-gaps around it (numpy's
    Dragon4 does not accept the boundaries either); p is the smallest such. That test is done
    for p = 1..9 in float64 on whole arrays; values it cannot decide with certainty, and the
    special ones, are printed by c_float itself."""
    flat = np.asarray(values).reshape(-1)
    with np.errstate(over="ignore"):
        f32 = flat.astype(np.float32)
    if np.isnan(f32).any():
        raise ValueError("NaN cannot be written as a C constant")
    out: list[str] = []
    for start in range(0, f32.size, _CHUNK):
        out += _c_floats_chunk(f32[start:start + _CHUNK])
    return out


def _c_floats_chunk(f32: np.ndarray) -> list[str]:
    bits = f32.view(np.uint32)
    special = ((bits & 0x7FFFFF) == 0) | ((bits & 0x7F800000) == 0x7F800000)
    a32 = np.abs(f32)
    a = a32.astype(np.float64)
    safe = np.where(special, 1.0, a)  # placeholders for the special values, never used
    half_gap = np.where(special, 0.0, (a - np.nextafter(a32, np.float32(0)).astype(np.float64)) / 2)
    e10 = np.floor(np.log10(safe)).astype(np.int64)
    lead = safe * _pow10(-e10)  # in [1, 10) once e10 is right
    e10 += (lead >= 10.0).astype(np.int64) - (lead < 1.0).astype(np.int64)
    unsure = special | (np.abs(lead - 1.0) < 1e-12) | (np.abs(lead - 10.0) < 1e-11)
    count = np.zeros(f32.size, np.int64)
    for p in range(1, 10):
        todo = (count == 0) & ~unsure
        if not todo.any():
            break
        scale = _pow10(p - 1 - e10[todo])
        q = safe[todo] * scale
        n = np.rint(q)
        frac = q - np.floor(q)
        edge = np.abs(np.abs(n - q) - half_gap[todo] * scale)
        doubt = (np.abs(frac - 0.5) < _HALF_MARGIN) | (edge < _EDGE_MARGIN)
        inside = (np.abs(n - q) < half_gap[todo] * scale) & ~doubt
        idx = np.flatnonzero(todo)
        unsure[idx[doubt]] = True
        count[idx[inside]] = p
    unsure |= count == 0
    # What was tested is the value rounded to `count` significant digits, which is what %e
    # prints (correctly rounded); c_float writes one digit as "1.0e-01".
    texts = ["%.*ef" % (p - 1, v) if p > 1 else ("%.0e" % v).replace("e", ".0e") + "f"
             for p, v in zip(count.tolist(), f32.astype(np.float64).tolist())]
    for k in np.flatnonzero(unsure).tolist():
        texts[k] = c_float(float(f32[k]))
    return texts


def _pow10(k: np.ndarray) -> np.ndarray:
    """10.0**k for integer arrays, exact for |k| <= 22 (one rounding beyond)."""
    return np.power(10.0, k.astype(np.float64))


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
        items = c_floats(flat)
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
