"""fold_qdq: Dequantize -> float op -> Quantize becomes the int8 op (QDQ ONNX models)."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.passes.fold_qdq import fold_qdq
from codegen.passes.int8_weights import exact_int8
from pass_testing import assert_same_graph, ops, random_feeds

RNG = np.random.default_rng(6)
QX, QY, QZ = Quant.of(0.05, 3), Quant.of(0.08, -20), Quant.of(0.1, 5)
WQ = RNG.integers(-127, 128, (4, 3, 3, 2)).astype(np.int8)
WQ[:, 0, 0, 0] = 127  # every channel reaches 127, as onnxruntime's symmetric quantizer makes it
W_SCALES = RNG.uniform(0.001, 0.01, 4).astype(np.float32)
W_FLOAT = WQ.astype(np.float32) * W_SCALES.reshape(4, 1, 1, 1)   # DequantizeLinear's float32 product
BQ = RNG.integers(-500, 500, 4).astype(np.int32)
B_FLOAT = (BQ.astype(np.float32) * (np.float32(QX.s) * W_SCALES)).astype(np.float32)


def qdq_conv(b, x):
    h = b.node("Dequantize", [x])
    h = b.node("Conv2D", [h, b.const("w", W_FLOAT), b.const("b", B_FLOAT)], pads=(1, 1, 1, 1))
    return b.node("Quantize", [h], quant=QY)


def test_conv_and_data_movement_become_int8():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 5, 5, 2))
    q = b.node("Quantize", [x], quant=QX)
    h = qdq_conv(b, q)
    h = b.node("Reshape", [b.node("Dequantize", [h])], shape=(1, 100))
    h = b.node("Quantize", [h], quant=QY)                      # same quantization: cancels
    y = b.node("Dequantize", [b.node("Quantize", [b.node("Dequantize", [h])], quant=QZ)])  # requantizes
    before = b.output(y).build()

    e = GraphBuilder("expected")
    x = e.input("x", "float32", (1, 5, 5, 2))
    q = e.node("Quantize", [x], quant=QX)
    w = e.const("w", WQ, quant=Quant.of(W_SCALES.astype(np.float64), 0, 0))
    bias = e.const("b", BQ, quant=Quant.of(QX.s * W_SCALES.astype(np.float64), 0, 0))
    h = e.node("Conv2D", [q, w, bias], pads=(1, 1, 1, 1), quant=QY)
    h = e.node("Reshape", [h], shape=(1, 100), quant=QY)
    h = e.node("Quantize", [h], quant=QZ)
    y = e.node("Dequantize", [h])
    expected = e.output(y).build()

    after = fold_qdq(before)
    assert_same_graph(after, expected)
    assert after.outputs == before.outputs
    feeds = random_feeds(before)
    out = before.outputs[0]
    lsb = np.abs(run_graph(after, feeds)[out] - run_graph(before, feeds)[out]).max() / QZ.s
    assert lsb <= 2.0 + 1e-6  # TFLite's rounding vs the float graph's, through two requantizations


def test_add_mean_and_clip_on_int8():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 4, 4, 3))
    q = b.node("Quantize", [x], quant=QX)
    d = b.node("Dequantize", [q])
    s = b.node("Quantize", [b.node("Sigmoid", [d])], quant=Quant.of(1 / 256, -128))
    a = b.node("Quantize", [b.node("Add", [d, b.node("Dequantize", [s])])], quant=QY)
    c = b.node("Quantize", [b.node("Clip", [b.node("Dequantize", [a])], min=0.0, max=6.0)], quant=QY)
    m = b.node("Quantize", [b.node("Mean", [b.node("Dequantize", [c])], axes=(1, 2))], quant=QZ)
    before = b.output(b.node("Dequantize", [m])).build()
    after = fold_qdq(before)
    assert ops(after) == ["Quantize", "Sigmoid", "Add", "Clip", "Mean", "Dequantize"]
    assert all(after.values[n.outputs[0]].dtype == "int8" for n in after.nodes[:-1])
    for seed in range(3):
        feeds = random_feeds(before, seed)
        out = before.outputs[0]
        diff = np.abs(run_graph(after, feeds)[out] - run_graph(before, feeds)[out])
        assert diff.max() <= 2 * QZ.s + 1e-6


def test_what_has_no_int8_form_stays_float():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 5, 5, 2))
    d = b.node("Dequantize", [b.node("Quantize", [x], quant=QX)])
    float_w = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)         # not int8 x scale
    y1 = b.node("Quantize", [b.node("Conv2D", [d, b.const("w", float_w)])], quant=QY)
    y2 = b.node("Quantize", [b.node("Softmax", [d])], quant=QY)           # TFLM needs 1/256, -128
    h = b.node("Conv2D", [d, b.const("w2", W_FLOAT)])
    y3 = b.node("Quantize", [h], quant=QY)
    y4 = b.node("Sigmoid", [h])                                           # the float result is read too
    before = b.output(y1, y2, y3, y4).build()
    after = fold_qdq(before)
    assert ops(after) == ops(before)



@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax_at_any_output_scale_folds_in_onnxruntime_numerics_only(axis):
    """A [0, 1] output calibrated to 1/255 (onnxruntime's quantizer): TFLM's kernel cannot write
    it, onnxruntime's QLinearSoftmax can (last axis only), so only that build folds it."""
    b = GraphBuilder("before")
    x = b.input("x", "float32", (2, 3, 10))
    d = b.node("Dequantize", [b.node("Quantize", [x], quant=QZ)])
    y = b.node("Dequantize", [b.node("Quantize", [b.node("Softmax", [d], axis=axis)], quant=Quant.of(1 / 255, -128))])
    before = b.output(y).build()
    assert ops(fold_qdq(before)) == ops(before)
    after = fold_qdq(before, numerics="onnxruntime")
    if axis == 1:
        assert ops(after) == ops(before)
        return
    assert ops(after) == ["Quantize", "Softmax", "Dequantize"]
    assert after.nodes[1].attrs["any_output_quant"] is True
    for seed in range(3):
        feeds = random_feeds(before, seed)
        diff = np.abs(run_graph(after, feeds)[y] - run_graph(before, feeds)[y])
        assert diff.max() <= 1 / 255 + 1e-6


@pytest.mark.parametrize("max_q", [127, 64, 5])
def test_int8_weights_are_recovered_exactly(max_q):
    q = RNG.integers(-max_q, max_q + 1, (6, 10)).astype(np.int8)
    q[:, 0] = max_q
    scales = RNG.uniform(1e-4, 1.0, 6).astype(np.float32)
    w = q.astype(np.float32) * scales[:, None]
    got_q, got_s = exact_int8(w, 0)
    np.testing.assert_array_equal(got_q.astype(np.float32) * got_s.astype(np.float32)[:, None], w)
    assert exact_int8(w + np.float32(1e-3), 0) is None
    assert exact_int8(np.zeros((2, 3), np.float32), 1)[0].tolist() == [[0] * 3] * 2


def test_graphs_with_int8_ops_are_not_folded():
    """A TFLite model's DEQUANTIZE -> op -> QUANTIZE runs as such in TFLite Micro: kept exact."""
    b = GraphBuilder("tflite_like")
    x = b.input("x", "int8", (1, 16), quant=QX)
    s = b.node("Softmax", [x], quant=Quant.of(1 / 256, -128))          # an int8 op
    d = b.node("Dequantize", [s])
    y = b.node("Quantize", [d], quant=Quant.of(0.01, -128))             # float re-quantization
    before = b.output(y).build()
    assert ops(fold_qdq(before)) == ["Softmax", "Dequantize", "Quantize"]
