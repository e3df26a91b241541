"""Helpers of the tests of ops whose output length depends on the data (NonZero, Unique,
NonMaxSuppression): onnx's reference implementation of one node, and a graph of several
such nodes compiled once and run on the host under ASan/UBSan."""

from __future__ import annotations

import numpy as np
from onnx import helper
from onnx.reference import ReferenceEvaluator

from codegen.ir import Graph, run_graph
from helpers import build_graph
from codegen.verify.host import run_generated


def onnx_reference(op_type: str, inputs: dict[str, np.ndarray | None], n_out: int = 1, **attrs) -> list[np.ndarray]:
    """Outputs of one ONNX node in onnx's reference implementation (None inputs left out)."""
    node = helper.make_node(op_type, [k if v is not None else "" for k, v in inputs.items()],
                            [f"y{i}" for i in range(n_out)], **attrs)
    return ReferenceEvaluator(node).run(None, {k: v for k, v in inputs.items() if v is not None})


def run_bounded(g: Graph, samples: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    """The generated C's outputs (in their actual shapes), each also equal to the numpy
    interpreter's, shape and values."""
    res = build_graph(g, "t")
    got = run_generated(res.files, "t", samples, sanitize=True)
    for sample, out in zip(samples, got):
        for name, want in run_graph(g, sample).items():
            assert out[name].shape == want.shape, (name, out[name].shape, want.shape)
            np.testing.assert_array_equal(out[name], want, err_msg=name)
    return got


def assert_same(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    np.testing.assert_array_equal(actual, expected, err_msg=what)
