"""Shared cases of the integer bit-operation tests (test_bitwise_*.py, test_bit_shift.py)."""

from __future__ import annotations

import numpy as np

from codegen.ops.bitwise import INTEGERS
from op_testing import assert_c_equals_reference, graph_of_cases

# (a shape, b shape): same shape, a scalar, both sides broadcasting
SHAPES = [((3, 5), (3, 5)), ((2, 3, 4), ()), ((2, 1, 4), (1, 3, 1))]


def int_values(dtype: str, shape, rng) -> np.ndarray:
    """Integers over the whole range of `dtype`, with its extremes, 0 and -1 among them."""
    info = np.iinfo(np.dtype(dtype))
    size = int(np.prod(shape, dtype=np.int64))
    raw = rng.integers(0, 2 ** 63, size, dtype=np.uint64) | (rng.integers(0, 2, size, dtype=np.uint64) << 63)
    x = raw.view(np.int64) if info.min < 0 else raw
    x = x.astype(dtype)  # wraps: the whole range
    edges = np.array([info.min, info.max, 0, 1], dtype=dtype)
    x[:min(size, 4)] = edges[:min(size, 4)]
    return x.reshape(shape)


def check_binary_c(op: str, values=int_values, **attrs) -> None:
    """Every dtype and broadcast of SHAPES in one graph: the generated C equals the reference."""
    rng = np.random.default_rng(0)
    cases, feed = [], {}
    for dtype in INTEGERS:
        for sa, sb in SHAPES:
            k = len(cases)
            cases.append(lambda b, p, dtype=dtype, sa=sa, sb=sb: b.node(
                op, [b.input(f"{p}a", dtype, sa), b.input(f"{p}b", dtype, sb)], **attrs))
            feed[f"c{k}_a"], feed[f"c{k}_b"] = values(dtype, sa, rng), values(dtype, sb, rng)
    g = graph_of_cases(op, cases)
    assert_c_equals_reference(g, [feed])
