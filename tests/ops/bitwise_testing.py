"""Shared cases of the integer bit-operation tests (test_bitwise_*.py, test_bit_shift.py)."""

from __future__ import annotations

import numpy as np

from codegen.ir import GraphBuilder, run_graph
from codegen.ops.bitwise import INTEGERS
from float_binary_testing import ort_node
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


def check_binary_c(op: str, values_b=int_values, **attrs) -> None:
    """Every dtype and broadcast of SHAPES in one graph: the generated C equals the reference
    (input a over its dtype's range, input b from `values_b`)."""
    rng = np.random.default_rng(0)
    cases, feed = [], {}
    for dtype in INTEGERS:
        for sa, sb in SHAPES:
            k = len(cases)
            cases.append(lambda b, p, dtype=dtype, sa=sa, sb=sb: b.node(
                op, [b.input(f"{p}a", dtype, sa), b.input(f"{p}b", dtype, sb)], **attrs))
            feed[f"c{k}_a"], feed[f"c{k}_b"] = int_values(dtype, sa, rng), values_b(dtype, sb, rng)
    g = graph_of_cases(op, cases)
    assert_c_equals_reference(g, [feed])


def check_binary_onnxruntime(op: str, dtype: str) -> None:
    """The reference of a Kiln op named as its ONNX op against onnxruntime on every broadcast."""
    rng = np.random.default_rng(1)
    for sa, sb in SHAPES:
        a, b = int_values(dtype, sa, rng), int_values(dtype, sb, rng)
        g = GraphBuilder("t")
        y = g.node(op, [g.input("a", dtype, sa), g.input("b", dtype, sb)])
        got = run_graph(g.output(y).build(), {"a": a, "b": b})[y]
        np.testing.assert_array_equal(got, ort_node(op, {"a": a, "b": b})[0])
