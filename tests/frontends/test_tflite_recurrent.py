"""Recurrent TFLite builtins over consecutive calls: UNIDIRECTIONAL_SEQUENCE_LSTM (float32) with
its state in variable tensors, which TFLite Micro and LiteRT carry from one call to the next."""

from __future__ import annotations

import numpy as np
import pytest
from tflite_case_table import cases_for
from tflite_cases import run_case
from tflite_recurrent_models import lstm_model
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


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_integer_lstm_is_refused_in_one_line(dtype):
    with pytest.raises(KilnError) as err:
        load_bytes(lstm_model(dtype=dtype))
    message = str(err.value)
    assert message.startswith("node 'out0': UNIDIRECTIONAL_SEQUENCE_LSTM: ") and "needs a kernel" in message
    assert "\n" not in message
