"""Shared checks of the reductions (ReduceSum/Max/Min/Prod, ArgMax/ArgMin): the reference
against onnxruntime over several axes and keepdims, then the generated C of every case (one
build) against the reference."""

from __future__ import annotations

import numpy as np

from codegen.ir import run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

SHAPE = (2, 3, 4, 5)
AXES = [(), (1,), (-1,), (0, 2), (1, 2, 3), (0, 1, 2, 3), (0, 3)]


def check_reduce(op: str, lo: float = -3.0, hi: float = 3.0, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, SHAPE).astype(np.float32)
    variants = [(axes, keep) for axes in AXES for keep in (True, False)]
    cases = [lambda b, p, a=a, k=k: b.node(op, [b.input(f"{p}x", "float32", SHAPE)], axes=a, keepdims=k)
             for a, k in variants]
    g = graph_of_cases(op.lower(), cases)
    feed = {f"c{k}_x": x for k in range(len(variants))}
    got = run_graph(g, feed)
    for k, (axes, keep) in enumerate(variants):
        inputs = {"x": x}
        if axes:
            inputs["axes"] = np.array(axes, np.int64)
        want = ort_node(op, inputs, {"keepdims": int(keep)}, opset=18)[0]
        actual = got[g.outputs[k]]
        assert actual.shape == want.shape, (axes, keep)
        np.testing.assert_allclose(actual, want, rtol=0, atol=1e-5 * float(np.abs(want).max()))
    assert_c_equals_reference(g, [feed])


def check_arg(op: str, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, SHAPE).astype(np.float32)  # ties: first / last index matters
    variants = [(axis, keep, last) for axis in (0, 1, -1, 2) for keep in (True, False) for last in (False, True)]
    cases = [lambda b, p, a=a, k=k, s=s: b.node(op, [b.input(f"{p}x", "float32", SHAPE)], axis=a, keepdims=k,
                                                 select_last_index=s) for a, k, s in variants]
    g = graph_of_cases(op.lower(), cases)
    feed = {f"c{k}_x": x for k in range(len(variants))}
    got = run_graph(g, feed)
    for k, (axis, keep, last) in enumerate(variants):
        want = ort_node(op, {"x": x}, {"axis": axis, "keepdims": int(keep), "select_last_index": int(last)},
                        opset=13)[0]
        np.testing.assert_array_equal(got[g.outputs[k]], want)
    assert_c_equals_reference(g, [feed])
