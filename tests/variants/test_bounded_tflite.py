"""`--max-shape` on TFLite: UNIDIRECTIONAL_SEQUENCE_LSTM (float, and int8 with TFLite Micro's
integer LSTM) compiled once with its time axis open, verified at several lengths against the
TFLite Micro interpreter / LiteRT running a model of that length, as tests/tflite_recurrent_models.py
writes it; int8 bit-exact."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tflite_models import TensorSpec, single_op_model
from tflite_recurrent_models import lstm_model

from codegen.cli import main
from codegen.errors import KilnError
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.variants.bounded import compile_bounded, verify_bounded
from codegen.variants.tflite_extent import tflite_at_extent

HOST = CompileOptions(load_target("host"))
SHAPE = dict(features=4, hidden=8)
MAX = {"x": (1, 16, 4)}


def lstm_file(folder: Path, dtype: str, steps: int = 16, open_steps: bool = True) -> Path:
    path = folder / f"lstm_{dtype}_{steps}{'_open' if open_steps else ''}.tflite"
    path.write_bytes(lstm_model(steps=steps, dtype=dtype, open_steps=open_steps, **SHAPE))
    return path


def per_length(folder: Path, dtype: str):
    """The reference at extent T: the same LSTM (same weights) written with T steps."""
    return lambda extent: lstm_file(folder, dtype, extent, open_steps=False)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_lstm_verified_at_one_mid_and_max_against_a_model_of_that_length(tmp_path, dtype):
    build, results = verify_bounded(lstm_file(tmp_path, dtype), HOST, MAX, samples=3,
                                    reference=per_length(tmp_path, dtype))
    assert [e for e, _ in results] == [1, 8, 16] and all(r.ok for _, r in results)
    if dtype == "int8":  # bit-exact with TFLite Micro, the state carried over the 3 samples
        assert all(o.max_abs_error == 0 for _, r in results for o in r.outputs)
    bounded = build.manifest["bounded_dimension"]
    assert (bounded["input"], bounded["axis"], bounded["max_extent"]) == ("x", 1, 16)
    assert bounded["outputs"] == [{"name": "out0", "axis": 1}] and len(bounded["recurrent_nodes"]) == 1
    # the steps the LSTM runs are a RAM array the extent sets, not a constant in flash
    name = build.member.name
    assert "steps" not in build.lib.files[f"{name}_weights.c"] and "lens" not in build.lib.files[f"{name}_weights.c"]
    assert f"int32_t {name}_extent_" in build.lib.files[f"{name}_extent.c"]


def test_the_reference_at_an_extent_is_the_model_written_at_that_length(tmp_path):
    """kiln verify's own reference (open dimensions set to T in place) is byte for byte the
    model written with T steps."""
    for dtype in ("float32", "int8"):
        opened = lstm_model(steps=16, dtype=dtype, open_steps=True, **SHAPE)
        for steps in (1, 5):
            assert tflite_at_extent(opened, steps) == lstm_model(steps=steps, dtype=dtype, open_steps=True, **SHAPE)


def test_cli_verify_at_its_default_lengths(tmp_path, capsys):
    model = lstm_file(tmp_path, "int8")
    assert main(["verify", str(model), "--target", "host", "--max-shape", "x=1,16,4", "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "ok (3 extents)" in out and out.count("max 0 LSB") == 3


@pytest.mark.parametrize("make, shape, message", [
    (lambda d: lstm_file(d, "int8", open_steps=False), {"x": (1, 16, 4)}, "exactly one of them unknown"),
    (lambda d: _mean_over_time(d), {"x": (1, 16, 4)}, "node 'y'.*reduces over the bounded dimension"),
])
def test_refused_with_node_and_reason(tmp_path, make, shape, message):
    with pytest.raises(KilnError, match=message):
        compile_bounded(make(tmp_path), HOST, shape)


def _mean_over_time(folder: Path) -> Path:
    x = TensorSpec((1, 1, 4), name="x", shape_signature=(1, -1, 4))
    axis = TensorSpec((1,), "int32", data=np.array([1], np.int32), name="axis")
    path = folder / "mean.tflite"
    path.write_bytes(single_op_model("MEAN", [x, axis], [TensorSpec((1, 4), name="y")], {"keep_dims": False}))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_lstm_on_cortex_m4_bit_exact_and_linear_in_the_length(tmp_path, dtype, capsys):
    options = CompileOptions(load_target("cortex-m4"))
    model = lstm_file(tmp_path, dtype)
    _, results = verify_bounded(model, options, MAX, samples=2, reference=per_length(tmp_path, dtype))
    assert all(r.ok for _, r in results)
    if dtype == "int8":
        assert all(o.max_abs_error == 0 for _, r in results for o in r.outputs)
    # kiln profile at 1, 8 and 16 (its default extents), written into the build's manifest
    out = tmp_path / "gen"
    flags = ["--target", "cortex-m4", "--max-shape", "x=1,16,4"]
    assert main(["build", str(model), *flags, "-o", str(out)]) == 0
    assert main(["profile", str(model), *flags, "--write-manifest", str(out)]) == 0
    capsys.readouterr()
    manifest = json.loads((out / f"{model.stem}.manifest.json").read_text())
    counts = manifest["bounded_dimension"]["instructions_by_extent"]
    c1, c8, c16 = counts["1"], counts["8"], counts["16"]
    per_step = (c16 - c1) / 15
    assert c1 < c8 < c16 and abs((c8 - c1) - 7 * per_step) < 0.01 * (c8 - c1)
