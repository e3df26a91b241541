"""LSTM: forward, reverse and bidirectional, bias, initial state and per-batch sequence lengths, peepholes:
the reference against onnxruntime, the generated C against the reference."""

from recurrent_testing import check_recurrent


def test_lstm_matches_onnxruntime_and_c():
    check_recurrent("LSTM", gates=4, states=2)
