"""Small ONNX models with a dynamic dimension, for the shape-variant tests and bench/VARIANTS.md."""

from __future__ import annotations

import onnx
from onnx import helper

from tests.onnx_models import ModelBuilder


def seq_classifier(channels: int = 8, hidden: int = 16, classes: int = 4) -> onnx.ModelProto:
    """A keyword-spotting-like 1-D CNN over a sequence of any length `seq`: two Conv1d + Relu,
    GlobalAveragePool over time, Gemm to the class scores."""
    b = ModelBuilder("seqcls", 13)
    x = b.input("x", [1, channels, "seq"])
    h = b.node("Conv", [x, b.weight("c1.w", (hidden, channels, 3), 0.3), b.weight("c1.b", (hidden,))],
               name="conv1", pads=[1, 1])
    h = b.node("Relu", [h], name="relu1")
    h = b.node("Conv", [h, b.weight("c2.w", (hidden, hidden, 3), 0.2), b.weight("c2.b", (hidden,))],
               name="conv2", pads=[1, 1])
    h = b.node("Relu", [h], name="relu2")
    h = b.node("GlobalAveragePool", [h], name="gap")
    h = b.node("Flatten", [h], name="flatten")
    b.nodes.append(helper.make_node("Gemm", [h, b.weight("fc.w", (classes, hidden)), b.weight("fc.b", (classes,))],
                                    ["scores"], name="fc", transB=1))
    return b.output("scores", [1, classes]).model()


def batch_cnn(classes: int = 10) -> onnx.ModelProto:
    """A small image CNN with a dynamic batch: Conv + Relu + MaxPool, Conv + Relu, GlobalAveragePool,
    Flatten, Gemm."""
    b = ModelBuilder("batchcnn", 13)
    x = b.input("image", ["batch", 3, 16, 16])
    h = b.node("Conv", [x, b.weight("conv1.w", (8, 3, 3, 3)), b.weight("conv1.b", (8,))], name="conv1",
               pads=[1, 1, 1, 1])
    h = b.node("Relu", [h], name="relu1")
    h = b.node("MaxPool", [h], name="pool1", kernel_shape=[2, 2], strides=[2, 2])
    h = b.node("Conv", [h, b.weight("conv2.w", (16, 8, 3, 3), 0.2), b.weight("conv2.b", (16,))], name="conv2",
               pads=[1, 1, 1, 1])
    h = b.node("Relu", [h], name="relu2")
    h = b.node("GlobalAveragePool", [h], name="gap")
    h = b.node("Flatten", [h], name="flatten")
    b.nodes.append(helper.make_node("Gemm", [h, b.weight("fc.w", (classes, 16)), b.weight("fc.b", (classes,))],
                                    ["logits"], name="fc", transB=1))
    return b.output("logits", ["batch", classes]).model()


def lstm_tagger(features: int = 8, hidden: int = 32, classes: int = 4) -> onnx.ModelProto:
    """An LSTM over a sequence of any length `seq` (ONNX layout [seq, batch 1, features]) and a
    per-step classifier: Reshape to [seq, hidden], MatMul + Add, Relu. Outputs the per-step scores
    and the last hidden state."""
    b = ModelBuilder("lstmtag", 13)
    x = b.input("x", ["seq", 1, features])
    y, y_h = b.node("LSTM", [x, b.weight("lstm.w", (1, 4 * hidden, features), 0.3),
                             b.weight("lstm.r", (1, 4 * hidden, hidden), 0.2), b.weight("lstm.b", (1, 8 * hidden), 0.1)],
                    name="lstm", n_out=2, hidden_size=hidden)
    h = b.node("Reshape", [y, b.ints("flat", [-1, hidden])], name="flatten")
    h = b.node("MatMul", [h, b.weight("fc.w", (hidden, classes))], name="fc")
    h = b.node("Add", [h, b.weight("fc.b", (classes,))], name="fc_bias")
    b.nodes.append(helper.make_node("Relu", [h], ["scores"], name="relu"))
    b.nodes.append(helper.make_node("Identity", [y_h], ["last"], name="last_state"))
    return b.output("scores", ["seq", classes]).output("last", [1, 1, hidden]).model()


def causal_tcn(channels: int = 8, hidden: int = 16, classes: int = 4) -> onnx.ModelProto:
    """A causal 1-D convolution stack over a sequence of any length `seq` (padding before only,
    the second dilated), a 1x1 convolution to per-step scores."""
    b = ModelBuilder("tcn", 13)
    x = b.input("x", [1, channels, "seq"])
    h = b.node("Conv", [x, b.weight("c1.w", (hidden, channels, 3), 0.3), b.weight("c1.b", (hidden,))],
               name="conv1", pads=[2, 0])
    h = b.node("Relu", [h], name="relu1")
    h = b.node("Conv", [h, b.weight("c2.w", (hidden, hidden, 3), 0.2), b.weight("c2.b", (hidden,))],
               name="conv2", pads=[4, 0], dilations=[2])
    h = b.node("Relu", [h], name="relu2")
    b.nodes.append(helper.make_node("Conv", [h, b.weight("c3.w", (classes, hidden, 1), 0.3)], ["scores"],
                                    name="conv3"))
    return b.output("scores", [1, classes, "seq"]).model()
