"""fold_pad: a Pad of H/W moves into the padding of the conv / max pool reading it, where exact."""

from __future__ import annotations

import math

import numpy as np
import pytest

from codegen.ir import GraphBuilder, Quant
from codegen.passes.fold_pad import fold_pad
from pass_testing import assert_same_graph, assert_same_results, ops

RNG = np.random.default_rng(3)
W = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)
DW = RNG.standard_normal((1, 3, 3, 2)).astype(np.float32)
HW_PADS = (0, 1, 2, 0, 0, 0, 1, 0)  # top 1, left 2, bottom 0, right 1


@pytest.mark.parametrize("op,weights", [("Conv2D", W), ("DepthwiseConv2D", DW)])
def test_zero_pad_folds_into_a_float_convolution(op, weights):
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 5, 5, 2))
    h = b.node("Pad", [x], pads=HW_PADS)
    before = b.output(b.node(op, [h, b.const("w", weights)], pads=(1, 0, 0, 1))).build()
    e = GraphBuilder("expected")
    x = e.input("x", "float32", (1, 5, 5, 2))
    expected = e.output(e.node(op, [x, e.const("w", weights)], pads=(2, 2, 0, 2))).build()
    after = fold_pad(before)
    assert_same_graph(after, expected)
    assert_same_results(before, after)


def test_minus_infinity_pad_folds_into_max_pool_but_nothing_into_average_pool():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 5, 5, 2))
    m = b.node("MaxPool2D", [b.node("Pad", [x], pads=HW_PADS, value=-math.inf)], kernel=(3, 3))
    a = b.node("AveragePool2D", [b.node("Pad", [x], pads=HW_PADS)], kernel=(3, 3))
    big = b.node("MaxPool2D", [b.node("Pad", [x], pads=(0, 2, 0, 0, 0, 0, 0, 0), value=-math.inf)],
                 kernel=(2, 2))  # pad 2 >= kernel 2: a window could see only padding
    before = b.output(m, a, big).build()
    after = fold_pad(before)
    assert ops(after) == ["MaxPool2D", "Pad", "AveragePool2D", "Pad", "MaxPool2D"]
    assert after.nodes[0].attrs["pads"] == (1, 2, 0, 1)
    assert_same_results(before, after)


def test_pads_that_cannot_fold():
    b = GraphBuilder("before")
    x = b.input("x", "float32", (1, 5, 5, 2))
    y1 = b.node("Conv2D", [b.node("Pad", [x], pads=(0, 0, 0, 1, 0, 0, 0, 0)), b.const("w", np.ones((1, 1, 1, 3), np.float32))])
    y2 = b.node("Conv2D", [b.node("Pad", [x], pads=HW_PADS, value=0.5), b.const("w2", W)])
    y3 = b.node("MaxPool2D", [b.node("Pad", [x], pads=HW_PADS)], kernel=(3, 3))   # 0 is not -inf
    before = b.output(y1, y2, y3).build()
    assert ops(fold_pad(before)) == ops(before)


def test_int8_pads_with_the_zero_point_fold():
    q = Quant.of(0.1, -5)
    wq = RNG.integers(-127, 128, (4, 3, 3, 2)).astype(np.int8)
    b = GraphBuilder("before")
    x = b.input("x", "int8", (1, 5, 5, 2), quant=q)
    h = b.node("Pad", [x], pads=HW_PADS, quant=q)                   # 0.0 quantizes to the zero point
    y = b.node("Conv2D", [h, b.const("w", wq, quant=Quant.of(np.full(4, 0.02), 0, 0))], quant=Quant.of(0.4, 3))
    m = b.node("MaxPool2D", [b.node("Pad", [x], pads=HW_PADS, value=-12.3, quant=q)], kernel=(3, 3), quant=q)  # -> -128
    n = b.node("MaxPool2D", [b.node("Pad", [x], pads=HW_PADS, quant=q)], kernel=(3, 3), quant=q)  # pads with -5
    before = b.output(y, m, n).build()
    after = fold_pad(before)
    assert ops(after) == ["Conv2D", "MaxPool2D", "Pad", "MaxPool2D"]
    assert_same_results(before, after, seeds=range(4))
