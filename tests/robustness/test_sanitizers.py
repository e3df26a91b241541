"""The generated C of every test model runs clean under AddressSanitizer and UBSan.

Every ONNX model of tests/onnx_models.py RUNNABLE, both golden models and all nine MLPerf
Tiny models are compiled for the host, built with -fsanitize=address,undefined
(-fno-sanitize-recover: the first report fails the run) and run on three random inputs
covering each input's whole range. ASan sees the arena as one object, so each model is also
built with --debug-canaries (canaries after every arena buffer and around the arena, checked
after each kernel call): an overflow from one buffer into the next fails that build's run,
and its outputs must equal the plain build's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from codegen.compiler import compile_model
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples
from onnx_models import RUNNABLE, input_shapes_of

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models"
MLPERF = ("ad01_fp32", "ad01_int8", "kws_ref_model", "kws_ref_model_float32", "pretrainedResnet",
          "pretrainedResnet_quant", "str_ww_ref_model", "vww_96_float", "vww_96_int8")


def sanitized_runs(path: Path, input_shapes: dict | None = None) -> None:
    outputs = []
    for canaries in (False, True):
        options = CompileOptions(target=load_target("host"), input_shapes=dict(input_shapes or {}),
                                 planner="greedy", canaries=canaries)
        build = compile_model(path, options)
        samples = random_samples(build.manifest["inputs"], 3, seed=7)
        # run_generated raises on any sanitizer report or a non-zero status (ERR_CANARY is 100)
        outputs.append(run_generated(build.files, build.name, samples, sanitize=True, cflags=("-O1",)))
    for plain, guarded in zip(*outputs):
        assert plain.keys() == guarded.keys()
        for name in plain:
            np.testing.assert_array_equal(plain[name], guarded[name], err_msg=name)


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_onnx_test_models_run_clean_under_sanitizers(name, tmp_path):
    model = RUNNABLE[name]()
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    sanitized_runs(path, input_shapes_of(model))


@pytest.mark.parametrize("file", ["mlp.onnx", "tiny_int8.tflite"])
def test_golden_models_run_clean_under_sanitizers(file):
    sanitized_runs(GOLDEN / file)


@pytest.mark.parametrize("stem", MLPERF)
def test_mlperf_tiny_models_run_clean_under_sanitizers(stem, models_dir):
    sanitized_runs(models_dir / f"{stem}.tflite")
