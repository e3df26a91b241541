"""int8 LSTM layers (TFLite Micro's integer LSTM, op IntegerLSTM) for the tests of its kernel
variants: random weights and quantization that keep the gates and the hidden state away from
saturation, so that the tests compare real values."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from codegen.ir import Graph, GraphBuilder, Quant
from codegen.kernels.select import variant_for_name
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.run import verify_model

# The converted Keras LSTM classifier (tests/tflite_converted/generate.py)
CLASSIFIER = Path(__file__).resolve().parents[1] / "tflite_converted" / "lstm_classifier_int8.tflite"

# The shapes every fast kernel is run on: (seq, batch, input, hidden, int8_lstm's options)
CASES = [
    (3, 1, 5, 7, {}),  # odd input, hidden not a multiple of 4
    (4, 2, 16, 16, {"per_gate": False}),  # two batch entries, whole blocks, one scale
    (2, 1, 1, 3, {"cell_clip": 0.5}),  # one input feature, fewer units than a block, clipped cell
    (5, 1, 20, 13, {"w_min": -128, "cell_scale": 2.0 ** -15}),  # weights of -128, another cell scale
    (2, 3, 33, 18, {}),  # more than one group of 16 (Helium, NEON) and of 32 bytes
    (4, 1, 9, 6, {"gain": 10.0, "cell_scale": 2.0 ** -13}),  # gates past the tables' ends, large tanh inputs
]


def int8_lstm(seq: int, batch: int, inp: int, hidden: int, *, seed: int, per_gate: bool = True,
              cell_scale: float = 2.0 ** -11, cell_clip: float = 0.0, w_min: int = -127,
              gain: float = 1.0) -> Graph:
    """A one-node IntegerLSTM graph: x [seq, batch, inp] (zero point -2), h0 (zero point 3) and
    c0 as inputs, weights in [w_min, 127] with one scale per gate (or one in all), int32 bias;
    `gain` scales the weights' scales (10: most gates saturate, the tables' flat ends).
    Outputs y, the last h and the last c; its input names end in a letter (merge appends the
    graph's index)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("lstm_s8")
    hq = Quant.of(0.01, 3)
    x = b.input("lstm_x", "int8", (seq, batch, inp), Quant.of(0.03, -2))
    h0 = b.input("lstm_h", "int8", (batch, hidden), hq)
    c0 = b.input("lstm_c", "int16", (batch, hidden), Quant.of(cell_scale))
    # weight scales that put a gate's sum near the sigmoid's knee (2^-12 units, a few thousand)
    base = gain * 2.0 / (0.03 * 74 * 73 * np.sqrt(inp + hidden))
    ws = Quant.of(list(base * rng.uniform(0.7, 1.4, 4)), 0, 0) if per_gate else Quant.of(base)
    w = b.const("lstm_w", rng.integers(w_min, 128, (4, hidden, inp)).astype(np.int8), quant=ws)
    r = b.const("lstm_r", rng.integers(w_min, 128, (4, hidden, hidden)).astype(np.int8), quant=ws)
    bias = b.const("lstm_b", rng.integers(-3000, 3000, (4, hidden)).astype(np.int32))
    outs = b.node("IntegerLSTM", [x, w, r, bias, h0, c0], cell_clip=cell_clip,
                  quant=[hq, hq, Quant.of(cell_scale)])
    return b.output(*outs).build()


def check_classifier_on(target: str, variant: str) -> None:
    """The converted int8 LSTM classifier on `target`, its LSTM run by `variant`'s kernel,
    bit-exact with the TFLite Micro interpreter."""
    t = load_target(target)
    assert variant_for_name("lstm_s8", t.variants) == variant
    res = verify_model(CLASSIFIER, CompileOptions(t), samples=4, seed=5)
    assert res.reference == "tflite-micro"
    for out in res.outputs:
        assert out.ok and out.max_abs_error == 0, f"{out.name}: {out.mismatches}/{out.elements} off"
