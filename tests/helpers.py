"""Test helpers: compile a graph for the host, run it, compare with the numpy interpreter."""

from __future__ import annotations

import numpy as np

from codegen.compiler import BuildResult, compile_graph
from codegen.ir import Graph, run_graph
from codegen.options import CompileOptions
from codegen.targets import Target, load_target
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples


def build_graph(g: Graph, name: str = "t", *, target: str | Target = "host", **opts) -> BuildResult:
    """The generated files of a test graph for `target` (a name, or a Target such as one
    restricted with codegen.targets.with_kernels), with CompileOptions `opts`."""
    t = load_target(target) if isinstance(target, str) else target
    return compile_graph(g, CompileOptions(t, **opts), name=name, model_file=f"{name}.test", model_sha256="0" * 64)


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


def assert_bit_exact(g: Graph, feeds: list[dict[str, np.ndarray]], outputs: list[dict[str, np.ndarray]]) -> None:
    """Each sample's outputs (from a build of `g` run anywhere) equal the numpy interpreter's,
    bit for bit."""
    for feed, out in zip(feeds, outputs):
        want = run_graph(g, feed)
        for name in g.outputs:
            np.testing.assert_array_equal(out[name], want[name], err_msg=name)


def check_kiln_verify_and_run(models_dir, tmp_path, capsys, target: str, samples: int) -> None:
    """`kiln verify` of the KWS model on `target` is bit-exact with TFLite Micro, and `kiln run`
    there writes the same outputs as on the host (the Cortex-M and Cortex-A tests)."""
    from codegen.cli import main

    model = models_dir / "kws_ref_model.tflite"
    assert main(["verify", str(model), "--target", target, "--samples", str(samples)]) == 0
    out = capsys.readouterr().out
    assert "against tflite-micro" in out and "max abs error 0," in out and "kiln verify: ok" in out
    x = random_samples([{"name": "x", "dtype": "int8", "shape": [1, 49, 10, 1]}], 1, seed=5)[0]["x"]
    np.save(tmp_path / "x.npy", x)
    for where in ("host", target):
        assert main(["run", str(model), "--target", where, "--input", str(tmp_path / "x.npy"),
                     "--output-dir", str(tmp_path / where)]) == 0
    (npy,) = sorted((tmp_path / "host").glob("*.npy"))
    np.testing.assert_array_equal(np.load(tmp_path / target / npy.name), np.load(npy))


def check_mlperf_model(models_dir, model: str, target: str):
    """`model` (an MLPerf Tiny file) verified on `target` with 20 samples: every output within
    tolerance, int8 outputs bit-exact. Returns the verification result."""
    from codegen.verify.run import verify_model

    res = verify_model(models_dir / model, CompileOptions(load_target(target)), samples=20, seed=7)
    for out in res.outputs:
        assert out.ok, f"{out.name}: {out.mismatches}/{out.elements} off, max abs error {out.max_abs_error}"
        if out.dtype == "int8":
            assert out.max_abs_error == 0
    return res
