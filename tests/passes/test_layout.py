"""sink_transposes: the ONNX frontend's NCHW <-> NHWC transposes move down and cancel."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import GraphBuilder, Quant
from codegen.passes.layout import _reshape_through, sink_transposes
from pass_testing import assert_same_graph, assert_same_results, ops

RNG = np.random.default_rng(0)
NHWC, NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


def w(o, c, k=3):
    return RNG.standard_normal((o, k, k, c)).astype(np.float32)


W1, W2 = w(4, 3), w(4, 4)
BN = [RNG.uniform(0.5, 1.5, 4).astype(np.float32) for _ in range(4)]
GAIN = RNG.standard_normal((4, 1, 1)).astype(np.float32)


def conv(b, x, weights, **attrs):
    """An NCHW conv as the ONNX frontend imports it."""
    t = b.node("Transpose", [x], perm=NHWC)
    y = b.node("Conv2D", [t, b.const("w", weights)], pads=(1, 1, 1, 1), **attrs)
    return b.node("Transpose", [y], perm=NCHW)


def test_transposes_between_convs_cancel_through_agnostic_ops():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 3, 6, 6))
    h = conv(b, x, W1)
    h = b.node("BatchNorm", [h] + [b.const(f"bn{k}", BN[k]) for k in range(4)], axis=1)
    h = b.node("Mul", [h, b.const("gain", GAIN)])
    h = b.node("Clip", [h], min=0.0, max=6.0)
    h = b.node("Pad", [h], pads=(0, 0, 1, 2, 0, 0, 0, 1))
    h = conv(b, h, W2)
    h = b.node("Softmax", [h], axis=1)
    y = b.node("Mean", [h], axes=(2, 3), keepdims=True)
    before = b.output(y).build()

    e = GraphBuilder("expected")
    x = e.input("x", "float32", (1, 3, 6, 6))
    h = e.node("Transpose", [x], perm=NHWC)
    h = e.node("Conv2D", [h, e.const("w", W1)], pads=(1, 1, 1, 1))
    h = e.node("BatchNorm", [h] + [e.const(f"bn{k}", BN[k]) for k in range(4)], axis=3)
    h = e.node("Mul", [h, e.const("gain", GAIN.reshape(1, 1, 1, 4))])
    h = e.node("Clip", [h], min=0.0, max=6.0)
    h = e.node("Pad", [h], pads=(0, 1, 2, 0, 0, 0, 1, 0))
    h = e.node("Conv2D", [h, e.const("w", W2)], pads=(1, 1, 1, 1))
    h = e.node("Softmax", [h], axis=3)
    h = e.node("Mean", [h], axes=(1, 2), keepdims=True)
    y = e.node("Reshape", [h], shape=(1, 4, 1, 1))  # the last transpose moves only size-1 axes
    expected = e.output(y).build()

    after = sink_transposes(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)
    assert after.outputs == before.outputs


def test_residual_add_with_a_graph_input_gets_a_boundary_transpose():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 4, 5, 5))
    h = conv(b, x, W2)
    h = b.node("Add", [h, x])
    y = b.node("Clip", [h], min=0.0, max=6.0)
    before = b.output(y).build()

    after = sink_transposes(before)
    assert ops(after) == ["Transpose", "Conv2D", "Transpose", "Add", "Clip", "Transpose"]
    inputs_t = [n for n in after.nodes if n.op == "Transpose" and n.inputs[0] == "x"]
    assert len(inputs_t) == 2  # one per reader of x; CSE merges them
    assert after.nodes[-1].outputs == ["clip"]
    assert_same_results(before, after)


def test_concat_of_branches_and_the_classifier_flatten():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 3, 4, 4))
    a = conv(b, x, W1)
    c = conv(b, x, W1[:2])
    h = b.node("Concat", [a, c], axis=1)                        # [1,6,4,4]
    f = b.node("Reshape", [h], shape=(1, 96))                   # NCHW flatten
    fc_w = RNG.standard_normal((5, 96)).astype(np.float32)
    y = b.node("FullyConnected", [f, b.const("fc", fc_w)])
    before = b.output(y).build()

    after = sink_transposes(before)
    assert ops(after) == ["Transpose", "Conv2D", "Transpose", "Conv2D", "Concat", "Reshape", "FullyConnected"]
    concat = after.nodes[4]
    assert concat.attrs["axis"] == 3
    assert_same_results(before, after)


def test_a_transpose_with_a_reader_that_needs_nchw_stays():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 3, 4, 4))
    h = conv(b, x, W1)
    s = b.node("Sigmoid", [h])
    r = b.node("Reshape", [h], shape=(16, 4))                   # mixes C and H: does not commute
    before = b.output(s, r).build()
    after = sink_transposes(before)
    assert ops(after) == ops(before)


@pytest.mark.parametrize("xs,p,zs,expect", [
    ((1, 5, 5, 3), NCHW, (1, 3, 1, 25), ((1, 1, 25, 3), (0, 3, 1, 2))),   # 1-D conv view of NHWC
    ((1, 1, 7, 4), NCHW, (1, 4, 7), ((1, 7, 4), (0, 2, 1))),               # back to NCL
    ((1, 4, 5, 3), (0, 3, 1, 2), (1, 3, 20), ((1, 20, 3), (0, 2, 1))),
    ((1, 4, 5, 3), (0, 3, 1, 2), (1, 60), None),                           # NCHW flatten: a real transpose
    ((2, 3), (1, 0), (6,), None),
    ((2, 3), (1, 0), (3, 2), ((2, 3), (1, 0))),                            # no reshape at all
])
def test_reshape_through_a_transpose(xs, p, zs, expect):
    got = _reshape_through(xs, p, zs)
    assert got == expect
    if got is not None:
        x = np.arange(int(np.prod(xs))).reshape(xs)
        shape, q = got
        np.testing.assert_array_equal(np.transpose(x, p).reshape(zs), np.transpose(x.reshape(shape), q))


def test_one_dimensional_convs_lose_their_transposes():
    wc = RNG.standard_normal((4, 1, 3, 3)).astype(np.float32)
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 3, 10))
    h = x
    for k in range(2):
        c = b.g.values[h].shape[1]
        h = b.node("Reshape", [h], shape=(1, c, 1, 10))
        h = b.node("Transpose", [h], perm=NHWC)
        h = b.node("Conv2D", [h, b.const("w", wc[:, :, :, :c] if k == 0 else RNG.standard_normal((4, 1, 3, 4)).astype(np.float32))],
                   pads=(0, 1, 0, 1))
        h = b.node("Transpose", [h], perm=NCHW)
        h = b.node("Reshape", [h], shape=(1, 4, 10))
        h = b.node("Sigmoid", [h])
    before = b.output(h).build()
    after = sink_transposes(before)
    assert [n.op for n in after.nodes if n.op == "Transpose"] == ["Transpose", "Transpose"]  # in and out
    assert after.nodes[-1].op == "Transpose" and after.nodes[-1].outputs == before.outputs
    assert_same_results(before, after)


def test_int8_transposes_keep_the_quantization():
    q = Quant.of(0.1, -3)
    wq = RNG.integers(-127, 128, (4, 3, 3, 4)).astype(np.int8)
    b = GraphBuilder("before")
    x = b.input("x", "int8", (1, 4, 5, 5), quant=q)
    t = b.node("Transpose", [x], perm=NHWC, quant=q)
    y = b.node("Conv2D", [t, b.const("w", wq, quant=Quant.of(np.full(4, 0.01), 0, 0))], pads=(1, 1, 1, 1),
               quant=Quant.of(0.5, 0))
    y = b.node("Transpose", [y], perm=NCHW, quant=Quant.of(0.5, 0))
    y = b.node("Clip", [y], min=0.0, max=6.0, quant=Quant.of(0.5, 0))
    before = b.output(y).build()
    after = sink_transposes(before)
    assert ops(after) == ["Transpose", "Conv2D", "Clip", "Transpose"]
    assert all(after.values[o].quant is not None for n in after.nodes for o in n.outputs)
    assert_same_results(before, after)
