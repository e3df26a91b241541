"""Shared checks of the float32 elementwise function ops (float_unary.FloatUnaryOp).

For each attribute variant: the numpy reference against onnxruntime on a sweep and random
samples of the op's domain, then the generated C of all variants (one build) against the
reference.
"""

from __future__ import annotations

import numpy as np

from codegen.ir import run_graph
from op_testing import assert_c_equals_reference, graph_of_cases, run_onnx_node

SHAPE = (3, 40)


def domain_inputs(lo: float, hi: float, seed: int = 0) -> list[np.ndarray]:
    """A sweep of [lo, hi] and uniform samples in it."""
    rng = np.random.default_rng(seed)
    sweep = np.linspace(lo, hi, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE)
    return [sweep, rng.uniform(lo, hi, SHAPE).astype(np.float32)]


def check_unary(op: str, variants=({},), lo: float = -6.0, hi: float = 6.0, opset: int = 18,
                onnx_op: str | None = None, rtol: float = 1e-5) -> None:
    xs = domain_inputs(lo, hi)
    cases = []
    for attrs in variants:
        def case(b, prefix, attrs=attrs):
            return b.node(op, [b.input(f"{prefix}x", "float32", SHAPE)], **attrs)
        cases.append(case)
    g = graph_of_cases(op.lower(), cases)
    for k, attrs in enumerate(variants):
        for x in xs:
            want = run_onnx_node(onnx_op or op, {"x": x}, attrs, opset=opset)
            got = run_graph(g, {f"c{i}_x": x for i in range(len(variants))})[g.outputs[k]]
            scale = float(np.abs(want).max())
            np.testing.assert_allclose(got, want, rtol=0, atol=rtol * scale, err_msg=f"{op} {attrs}")
    feeds = [{f"c{i}_x": x for i in range(len(variants))} for x in xs]
    assert_c_equals_reference(g, feeds, rtol=rtol)
