"""GRU: forward, reverse and bidirectional, bias, initial state and per-batch sequence lengths, linear_before_reset:
the reference against onnxruntime, the generated C against the reference."""

from recurrent_testing import check_recurrent


def test_gru_matches_onnxruntime_and_c():
    check_recurrent("GRU", gates=3, states=1)
