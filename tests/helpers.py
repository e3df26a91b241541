"""Test helpers: compile a graph for the host, run it, compare with the numpy interpreter."""

from __future__ import annotations

import numpy as np

from codegen.compiler import BuildResult, compile_graph
from codegen.ir import Graph, run_graph
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples


def build_graph(g: Graph, name: str = "t", **opts) -> BuildResult:
    return compile_graph(g, CompileOptions(load_target("host"), **opts), name=name, model_file=f"{name}.test",
                         model_sha256="0" * 64)


def run_c(g: Graph, samples: list[dict[str, np.ndarray]], name: str = "t", sanitize: bool = True):
    """Outputs of the generated C for `samples` (built with ASan/UBSan by default)."""
    res = build_graph(g, name)
    return run_generated(res.files, name, samples, sanitize=sanitize)


def assert_c_matches_interpreter(g: Graph, count: int = 3, seed: int = 0, rtol: float = 1e-5) -> None:
    """The generated C equals the numpy interpreter: bit for bit on integers, within rtol on floats."""
    res = build_graph(g)
    samples = random_samples(res.manifest["inputs"], count, seed)
    got = run_generated(res.files, "t", samples, sanitize=True)
    for sample, out in zip(samples, got):
        ref = run_graph(g, sample)
        for name, expected in ref.items():
            actual = out[name]
            if np.issubdtype(expected.dtype, np.floating):
                scale = max(float(np.abs(expected).max()), 1e-30)
                assert np.abs(actual - expected).max() <= rtol * scale, name
            else:
                np.testing.assert_array_equal(actual, expected, err_msg=name)
