"""Shared check of CumSum / CumProd: every axis, exclusive and reverse, the reference against
onnxruntime (CumSum) or numpy (CumProd: onnxruntime 1.32 has no kernel), the generated C
against the reference."""

from __future__ import annotations

import itertools

import numpy as np

from codegen.ir import run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

SHAPE = (2, 3, 4)


def check_cumulative(op: str) -> None:
    x = np.random.default_rng(0).uniform(0.5, 1.5, SHAPE).astype(np.float32)
    variants = list(itertools.product((0, 1, -1), (False, True), (False, True)))
    cases = [lambda b, p, a=a, e=e, r=r: b.node(op, [b.input(f"{p}x", "float32", SHAPE)], axis=a, exclusive=e,
                                                 reverse=r) for a, e, r in variants]
    g = graph_of_cases(op.lower(), cases)
    feed = {f"c{k}_x": x for k in range(len(variants))}
    got = run_graph(g, feed)
    for k, (axis, excl, rev) in enumerate(variants):
        if op == "CumSum":
            want = ort_node("CumSum", {"x": x, "a": np.array(axis, np.int64)},
                            {"exclusive": int(excl), "reverse": int(rev)}, opset=14)[0]
        else:
            y = np.flip(x, axis) if rev else x
            c = np.cumprod(y, axis=axis)
            if excl:
                c = np.concatenate([np.ones_like(np.take(c, [0], axis)), np.take(c, range(SHAPE[axis] - 1), axis)], axis)
            want = np.flip(c, axis) if rev else c
        np.testing.assert_allclose(got[g.outputs[k]], want, rtol=1e-6, err_msg=str((axis, excl, rev)))
    assert_c_equals_reference(g, [feed])
