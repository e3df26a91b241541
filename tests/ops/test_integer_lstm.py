"""IntegerLSTM: the generated C against the numpy reference (bit for bit), and TFLM's 16-bit
sigmoid and tanh (codegen/quant/sigmoid16.py) against TFLite Micro on every int16 input. Whole
int8 LSTM models against TFLite Micro: tests/frontends/test_tflite_recurrent.py."""

import numpy as np
import pytest
from tflite_models import TensorSpec, run_tflm, single_op_model

from codegen.errors import KilnError
from codegen.ir import GraphBuilder
from codegen.ir.types import Quant
from codegen.quant.sigmoid16 import sigmoid_int16, tanh_int16
from helpers import assert_c_matches_interpreter, build_graph

RNG = np.random.default_rng(11)


def lstm_graph(seq=4, batch=2, inp=3, hidden=5, cell_scale=2.0 ** -11, cell_clip=0.0, per_gate=True, act="int8"):
    """int8 activations (zero points -2, 3), or int16 (zero points 0, int64 bias: the 16x8 LSTM)."""
    b = GraphBuilder("g")
    wide = act == "int16"
    hq = Quant.of(2.0 ** -14, 0) if wide else Quant.of(0.01, 3)
    x = b.input("x", act, (seq, batch, inp), Quant.of(0.0004, 0) if wide else Quant.of(0.03, -2))
    h0 = b.input("h0", act, (batch, hidden), hq)
    c0 = b.input("c0", "int16", (batch, hidden), Quant.of(cell_scale))
    ws = Quant.of([0.01, 0.012, 0.008, 0.011], 0, 0) if per_gate else Quant.of(0.01)
    w = b.const("w", RNG.integers(-127, 128, (4, hidden, inp)).astype(np.int8), quant=ws)
    r = b.const("r", RNG.integers(-127, 128, (4, hidden, hidden)).astype(np.int8), quant=ws)
    bias = RNG.integers(-3000, 3000, (4, hidden)) * (100 if wide else 1)
    bias = b.const("bias", bias.astype(np.int64 if wide else np.int32))
    outs = b.node("IntegerLSTM", [x, w, r, bias, h0, c0], cell_clip=cell_clip, quant=[hq, hq, Quant.of(cell_scale)])
    return b.output(*outs).build()


@pytest.mark.parametrize("kw", [{}, {"cell_scale": 2.0 ** -15}, {"cell_clip": 2.0, "per_gate": False},
                                {"act": "int16"}, {"act": "int16", "cell_clip": 1.5, "per_gate": False}],
                         ids=["cell_2^-11", "cell_2^-15", "clip_one_scale", "int16", "int16_clip_one_scale"])
def test_c_matches_reference(kw):
    assert_c_matches_interpreter(lstm_graph(**kw), count=3)


def test_sixteen_bit_sigmoid_and_tanh_match_tflite_micro_everywhere():
    x = np.arange(-32768, 32768, dtype=np.int16)
    for op, ours in (("TANH", tanh_int16), ("LOGISTIC", sigmoid_int16)):
        model = single_op_model(op, [TensorSpec((65536,), "int16", scale=2 ** -12, zero_point=0)],
                                [TensorSpec((65536,), "int16", scale=2 ** -15, zero_point=0)])
        np.testing.assert_array_equal(ours(x), run_tflm(model, x)[0], err_msg=op)


def test_cell_state_scale_must_be_a_power_of_two():
    with pytest.raises(KilnError, match="is not a power of two"):
        build_graph(lstm_graph(cell_scale=0.0003))


def test_int16_gate_sums_past_two_to_the_47_are_refused():
    g = lstm_graph(act="int16")
    bias = next(v for v in g.values.values() if v.name == "bias")
    bias.data = np.full(bias.shape, 1 << 47, np.int64)
    with pytest.raises(KilnError, match="2\\*\\*47"):
        build_graph(g)
