"""Recurrent TFLite builtins over consecutive calls: UNIDIRECTIONAL_SEQUENCE_LSTM (float32; int8
and int16 bit-exact with TFLite Micro's integer LSTM) and SVDF, their state in variable tensors, which
TFLite Micro and LiteRT carry from one call to the next."""

from __future__ import annotations

import numpy as np
import pytest
from tflite_case_table import cases_for
from tflite_cases import run_case
from tflite_recurrent_models import lstm_model, svdf_model
from tflite_streaming import StreamCase, build_stream, run_kiln_stream, run_litert_stream, run_tflm_stream

from codegen.errors import KilnError
from codegen.frontends.tflite import load_bytes


@pytest.mark.parametrize("case", cases_for("UNIDIRECTIONAL_SEQUENCE_LSTM", "float32"), ids=lambda c: c.label)
def test_float_lstm_matches_litert_over_consecutive_calls(case):
    outcome = run_case(case)
    assert outcome.status == "pass", outcome.reason


def test_float_lstm_with_peepholes_matches_litert():
    """TFLite Micro refuses peepholes in Prepare; LiteRT runs them."""
    case = StreamCase("UNIDIRECTIONAL_SEQUENCE_LSTM", "float32", "peephole", [], [], reference="litert",
                      make=lambda: lstm_model(peephole=True, seed=2))
    assert run_case(case).status == "pass"


def test_float_lstm_state_carries_over_like_tflite_micro():
    model = lstm_model(batch=2, steps=3, seed=4)
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((2, 3, 3)).astype(np.float32) for _ in range(6)]
    result = build_stream(model)
    assert result.manifest["state_bytes"] == 2 * 2 * 4 * 4  # h and c, [2, 4] float32 each
    got = run_kiln_stream(result, inputs)
    for want, have in zip(run_tflm_stream(model, inputs), got):
        np.testing.assert_allclose(have[0].reshape(want[0].shape), want[0], rtol=0, atol=1e-6)
    # the first call's output alone differs from the sixth's for the same input (state)
    again = run_litert_stream(model, inputs[:1] * 2)
    assert not np.allclose(again[0][0], again[1][0])


@pytest.mark.parametrize("case", cases_for("UNIDIRECTIONAL_SEQUENCE_LSTM", "int8")
                         + cases_for("UNIDIRECTIONAL_SEQUENCE_LSTM", "int16"), ids=lambda c: f"{c.dtype}-{c.label}")
def test_integer_lstm_bit_exact_with_tflite_micro_over_consecutive_calls(case):
    outcome = run_case(case)
    assert outcome.status == "pass", outcome.reason


@pytest.mark.parametrize("dtype, kernel, hidden_bytes", [("int8", "lstm_s8", 8), ("int16", "lstm_s16", 16)])
def test_integer_lstm_keeps_its_hidden_type_and_an_int16_cell_state(dtype, kernel, hidden_bytes):
    result = build_stream(lstm_model(dtype=dtype, batch=2))
    assert [(s["dtype"], s["bytes"]) for s in result.manifest["state"]] == [(dtype, hidden_bytes), ("int16", 16)]
    assert kernel in result.manifest["kernels"]


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_integer_lstm_on_cortex_m4_bit_exact(dtype):
    case = StreamCase("UNIDIRECTIONAL_SEQUENCE_LSTM", dtype, "m4", [], [], make=lambda: lstm_model(dtype=dtype, seed=6))
    outcome = run_case(case, samples=2, target="cortex-m4")
    assert outcome.status == "pass", outcome.reason


def test_int16_lstm_with_int32_biases_is_refused_in_one_line():
    """TFLite Micro's 16-bit-activation LSTM reads int64 biases."""
    with pytest.raises(KilnError) as err:
        load_bytes(lstm_model(dtype="int16", bias_type="int32"))
    message = str(err.value)
    assert message.startswith("node 'out0': UNIDIRECTIONAL_SEQUENCE_LSTM: ") and "int64 gate biases" in message
    assert "\n" not in message


# -- SVDF ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_svdf_matches_tflite_micro_over_consecutive_calls(dtype):
    for case in cases_for("SVDF", dtype):
        outcome = run_case(case)
        assert outcome.status == "pass", f"{case.id}: {outcome.reason}"


def test_svdf_without_bias_and_with_relu_matches_litert():
    """TFLite Micro dereferences the absent bias (its TODO #1751); LiteRT runs it."""
    case = StreamCase("SVDF", "float32", "no_bias_relu", [], [], reference="litert",
                      make=lambda: svdf_model(batch=2, bias=False, activation="RELU", seed=3))
    assert run_case(case).status == "pass"


def test_svdf_int8_state_is_kept_beside_the_arena():
    result = build_stream(svdf_model("int8", batch=2))
    assert result.manifest["state_bytes"] == 2 * 6 * 4 * 2  # [2, filters 6 * memory 4] int16
    assert [s["dtype"] for s in result.manifest["state"]] == ["int16"]


def test_svdf_int8_on_cortex_m4_bit_exact():
    case = cases_for("SVDF", "int8")[1]
    outcome = run_case(case, samples=2, target="cortex-m4")
    assert outcome.status == "pass", outcome.reason


def test_svdf_with_int8_state_is_refused_in_one_line():
    from tflite_models import ModelWriter, TensorSpec, const

    w = ModelWriter()
    ins = [w.tensor(TensorSpec((1, 4), "int8", scale=0.1, name="x")),
           w.tensor(const(np.ones((2, 4)), "int8", scale=0.1)), w.tensor(const(np.ones((2, 3)), "int8", scale=0.1)),
           w.tensor(const(np.zeros(2), "int32", scale=0.01)),
           w.tensor(TensorSpec((1, 6), "int8", scale=0.1, name="state", is_variable=True))]
    y = w.tensor(TensorSpec((1, 2), "int8", scale=0.1, name="out0"))
    w.op("SVDF", ins, [y], {"rank": 1})
    from tflite_cases import run_model
    outcome = run_model(w.build([ins[0]], [y]), lambda rng: [np.zeros((1, 4), np.int8)], "tflm")
    assert outcome.status == "refused" and "\n" not in outcome.reason
    assert "SVDF on int8, int8, int8, int32, int8 is not supported" in outcome.reason
