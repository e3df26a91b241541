"""Bounded dynamic dimensions (`--max-shape`): compiled once for the largest extent, run on any
extent up to it, refused with the reason where a smaller extent would change the result."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from codegen.cli import main
from codegen.errors import KilnError
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.variants.bounded import at_extent, compile_bounded, verify_bounded
from codegen.variants.commands import profile_library
from codegen.verify.run import run_on_target
from codegen.verify.samples import random_samples
from onnx_models import dynamic_seq
from tests.variants.models import batch_cnn, causal_tcn, lstm_tagger, seq_classifier

HOST = CompileOptions(load_target("host"))


def saved(tmp_path: Path, model: onnx.ModelProto, name: str) -> Path:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    return path


def test_lstm_runs_every_length_up_to_the_maximum(tmp_path):
    build, results = verify_bounded(saved(tmp_path, lstm_tagger(), "lstm"), HOST, {"x": (24, 1, 8)}, samples=2)
    assert [e for e, _ in results] == [1, 12, 24] and all(r.ok for _, r in results)
    manifest = json.loads(build.lib.files["lstm.manifest.json"])
    assert manifest["bounded_dimension"] == {
        "input": "x", "axis": 0, "max_extent": 24, "entry": "lstm_run_extent",
        "outputs": [{"name": "scores", "axis": 0}], "recurrent_nodes": ["lstm"]}
    # the sequence length is a RAM array the extent sets, not a constant in flash
    assert "lens" not in build.lib.files["lstm_weights.c"]
    assert "int32_t lstm_extent_lens_lstm_0[1] = { 24 };" in build.lib.files["lstm_extent.c"]


@pytest.mark.parametrize("model, shape", [(causal_tcn, (1, 8, 20)), (batch_cnn, (3, 3, 16, 16))])
def test_causal_convolutions_and_a_batch_axis(tmp_path, model, shape):
    _, results = verify_bounded(saved(tmp_path, model(), "m"), HOST, {"x" if model is causal_tcn else "image": shape},
                                samples=1)
    assert len(results) == 3 and all(r.ok for _, r in results)


def test_an_extent_beyond_the_maximum_is_an_error_code(tmp_path):
    build = compile_bounded(saved(tmp_path, lstm_tagger(), "lstm"), HOST, {"x": (8, 1, 8)})
    view = at_extent(build, 9)  # the test entry point passes 9: <N>_run_extent refuses it
    with pytest.raises(RuntimeError, match="32"):
        run_on_target(view, HOST, random_samples(view.manifest["inputs"], 1, 0))


@pytest.mark.parametrize("model, shape, message", [
    (seq_classifier, {"x": (1, 8, 16)}, "node 'conv1'.*slides a window along the bounded dimension that reads later"),
    (dynamic_seq, {"tokens": (2, 16, 8)}, "exactly one of them unknown"),
    (lstm_tagger, {"x": (16, 2, 8)}, "differs from the model's"),
    (lstm_tagger, {"y": (16, 1, 8)}, "'y', which is not a model input"),
])
def test_refused_with_the_reason(tmp_path, model, shape, message):
    with pytest.raises(KilnError, match=message):
        compile_bounded(saved(tmp_path, model(), "m"), HOST, shape)


def test_cli_build_and_run_at_an_extent(tmp_path, capsys):
    import numpy as np

    model = saved(tmp_path, lstm_tagger(), "lstm")
    assert main(["build", str(model), "--target", "host", "-o", str(tmp_path / "gen"), "--max-shape", "x=16,1,8"]) == 0
    assert "lstm_run_extent" in capsys.readouterr().out
    assert {"lstm_extent.h", "lstm_extent.c", "lstm_arena.c"} <= {p.name for p in (tmp_path / "gen").iterdir()}
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(0).standard_normal((5, 1, 8)).astype(np.float32))
    assert main(["run", str(model), "--target", "host", "--max-shape", "x=16,1,8", "--input", str(x),
                 "--output-dir", str(tmp_path / "o")]) == 0
    from onnx_models import ort_outputs

    expected = ort_outputs(onnx.load(model), {"x": np.load(x)})
    np.testing.assert_allclose(np.load(tmp_path / "o" / "scores.npy"), expected["scores"], rtol=1e-5, atol=1e-6)
    assert main(["build", str(model), "--target", "host", "-o", str(tmp_path / "g2"), "--max-shape", "x=16,1,8",
                 "--variant", "x=8,1,8"]) == 2
    assert "do not combine" in capsys.readouterr().err


@pytest.mark.slow
def test_lstm_instructions_grow_linearly_on_cortex_m4(tmp_path):
    model = saved(tmp_path, lstm_tagger(), "lstm")
    profiles = profile_library(model, CompileOptions(load_target("cortex-m4")), [], max_shapes={"x": (32, 1, 8)},
                               extents=(1, 16, 32))
    c1, c16, c32 = (min(p.totals) for _, _, p in profiles)
    per_step = (c32 - c1) / 31
    assert c1 < c16 < c32 and abs((c16 - c1) - 15 * per_step) < 0.01 * (c16 - c1)
