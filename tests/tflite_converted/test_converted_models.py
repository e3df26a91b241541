"""Models built with Keras and TFLite's own converter (tests/tflite_converted/generate.py; the
committed .tflite files, no TensorFlow here), compiled by Kiln and checked against the runtime
TFLite Micro users have: int8 bit-exact with the TFLite Micro interpreter, float32 within
LiteRT's tolerance, on the host and as Cortex-M4 firmware in QEMU. The streaming keyword
spotter keeps its resource variables between calls: 50 consecutive calls of the generated code
against 50 Invoke()s of one TFLite Micro interpreter."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tflite
from tflite.BuiltinOperator import BuiltinOperator
from tflite_streaming import build_stream, run_kiln_stream, run_tflm_stream

from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.reference import run_reference
from codegen.verify.run import verify_model
from codegen.verify.samples import random_samples

HERE = Path(__file__).resolve().parent
_OP_NAMES = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}

# Each model, and the builtins it was built to exercise (the converter's own choice of ops).
MODELS = {
    "mobilenet_v3_small_int8": {"HARD_SWISH", "DEPTHWISE_CONV_2D", "MEAN", "MUL"},
    "lstm_classifier_int8": {"UNIDIRECTIONAL_SEQUENCE_LSTM"},
    "streaming_kws_int8": {"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE"},
    "transformer_encoder_int8": {"BATCH_MATMUL", "RSQRT", "SOFTMAX", "MEAN", "SQUARED_DIFFERENCE"},
    "unet_int8": {"TRANSPOSE_CONV", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "CONCATENATION"},
    "transformer_encoder_float32": {"BATCH_MATMUL", "RSQRT", "SOFTMAX", "MEAN", "SQUARED_DIFFERENCE"},
    "unet_float32": {"TRANSPOSE_CONV", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "CONCATENATION"},
    "face_detector_float32": {"PRELU", "RESIZE_BILINEAR", "DEPTHWISE_CONV_2D", "LOGISTIC"},
}
CALLS = 50


def _path(name: str) -> Path:
    return HERE / f"{name}.tflite"


def _builtins(path: Path) -> Counter:
    m = tflite.Model.GetRootAs(path.read_bytes(), 0)
    ops = Counter()
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        for i in range(sg.OperatorsLength()):
            code = m.OperatorCodes(sg.Operators(i).OpcodeIndex())
            ops[_OP_NAMES[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]] += 1
    return ops


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_holds_the_builtins_it_was_built_for(name):
    assert MODELS[name] <= set(_builtins(_path(name))), sorted(_builtins(_path(name)))


def _check(name: str, target: str, samples: int) -> None:
    res = verify_model(_path(name), CompileOptions(load_target(target)), samples=samples, seed=3)
    assert res.reference == ("litert" if name.endswith("float32") else "tflite-micro")
    for out in res.outputs:
        assert out.ok, f"{out.name}: {out.mismatches}/{out.elements} off, max abs error {out.max_abs_error}"
        if out.dtype == "int8":
            assert out.max_abs_error == 0


@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_reference_on_host(name):
    _check(name, "host", samples=10)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_reference_on_cortex_m4(name):
    _check(name, "cortex-m4", samples=3)


@pytest.mark.parametrize("name", sorted(n for n in MODELS if n.endswith("int8")))
def test_reference_outputs_vary(name):
    """The random inputs reach past saturated outputs: a bit-exact match says something."""
    path = _path(name)
    sg = tflite.Model.GetRootAs(path.read_bytes(), 0).Subgraphs(0)
    ios = [{"name": sg.Tensors(i).Name().decode(), "dtype": "int8", "shape": list(sg.Tensors(i).ShapeAsNumpy())}
           for i in sg.InputsAsNumpy()]
    outs = run_reference(path, random_samples(ios, 10, 3))
    values = {int(v) for o in outs for a in o.values() for v in np.ravel(a)}
    assert len(values) >= 5, values


def _frames(count: int, seed: int = 11) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, (1, 1, 10)).astype(np.int8) for _ in range(count)]


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_streaming_kws_50_calls_match_tflite_micro(target):
    model = _path("streaming_kws_int8").read_bytes()
    inputs = _frames(CALLS)
    result = build_stream(model, target)
    expected = run_tflm_stream(model, inputs)
    got = run_kiln_stream(result, inputs, target)
    for call, (want, have) in enumerate(zip(expected, got)):
        for a, b in zip(want, have):
            np.testing.assert_array_equal(b.reshape(a.shape), a, err_msg=f"call {call}")
    # the state carries: the same frame gives other scores later in the stream
    assert len({tuple(w[0].ravel()) for w in expected}) > CALLS // 2
    assert result.manifest["state_bytes"] > 0

