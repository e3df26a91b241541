"""All MLPerf Tiny models build for the host and match their reference runtime.

int8 models: bit-exact with the TFLite Micro interpreter on 20 random inputs.
float models: within 1e-5 relative of LiteRT.
"""

from __future__ import annotations

import pytest

from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.run import verify_model

MODELS = ["kws_ref_model.tflite", "kws_ref_model_float32.tflite", "vww_96_int8.tflite", "vww_96_float.tflite",
          "pretrainedResnet_quant.tflite", "pretrainedResnet.tflite", "ad01_int8.tflite", "ad01_fp32.tflite",
          "str_ww_ref_model.tflite"]


@pytest.mark.parametrize("model", MODELS)
def test_mlperf_model_matches_reference(models_dir, model):
    res = verify_model(models_dir / model, CompileOptions(load_target("host")), samples=20, seed=7)
    expected = "litert" if "float" in model or "fp32" in model or model == "pretrainedResnet.tflite" \
        else "tflite-micro"
    assert res.reference == expected
    for out in res.outputs:
        assert out.ok, f"{out.name}: {out.mismatches}/{out.elements} off, max abs error {out.max_abs_error}"
        if out.dtype == "int8":
            assert out.max_abs_error == 0
