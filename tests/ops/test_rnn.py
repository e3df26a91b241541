"""RNN: forward, reverse and bidirectional, bias, initial state and per-batch sequence lengths:
the reference against onnxruntime, the generated C against the reference."""

from recurrent_testing import check_recurrent


def test_rnn_matches_onnxruntime_and_c():
    check_recurrent("RNN", gates=1, states=1)
