"""ResizeBilinearInt8: TFLite Micro's fixed-point taps (its bit-exactness with TFLite Micro:
tests/frontends/test_tflite_int8_fixed_point.py), the numpy reference on cases worked by hand,
and the generated C against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.ops.resize_bilinear_int8 import axis_taps
from op_testing import assert_c_equals_reference, finish, graph_of_cases, random_feeds

OP = "ResizeBilinearInt8"
Q = Quant.of(0.05, -7)


def _case(shape, size, align, half):
    def build(b: GraphBuilder, prefix: str) -> str:
        x = b.input(f"{prefix}x", "int8", shape, Q)
        return b.node(OP, [x], size=size, align_corners=int(align), half_pixel_centers=int(half), quant=Q)
    return build


def test_taps_by_hand():
    # 2 -> 4 asymmetric: scale 512, sources 0, 0.5, 1, 1.5 (the last clamped to the edge)
    assert [t.tolist() for t in axis_taps(2, 4, False, False)] == [[0, 0, 1, 1], [0, 1, 1, 1], [0, 512, 0, 512]]
    # half-pixel centres: the first output lies left of the first input centre (negative weight)
    lo, hi, w = axis_taps(2, 4, False, True)
    assert lo.tolist() == [0, 0, 0, 1] and hi.tolist() == [0, 1, 1, 1] and w.tolist() == [-256, 256, 768, 256]


def test_reference_interpolates_with_rounding_half_away():
    b = GraphBuilder(OP)
    g = finish(b, b.node(OP, [b.input("x", "int8", (1, 1, 2, 1), Q)], size=(1, 4), quant=Q))
    out = run_graph(g, {"x": np.array([10, -3], np.int8).reshape(1, 1, 2, 1)})[g.outputs[0]]
    # 10, (10 - 3) / 2 = 3.5 -> 4, -3, (-3 - 3) / 2 = -3
    assert out.ravel().tolist() == [10, 4, -3, -3]


CASES = [((1, 4, 5, 3), (8, 10), False, False), ((1, 4, 5, 3), (8, 10), False, True),
         ((2, 4, 5, 3), (7, 9), True, False), ((1, 9, 7, 2), (4, 3), False, True)]


def test_generated_c_equals_reference():
    g = graph_of_cases(OP, [_case(*c) for c in CASES])
    assert_c_equals_reference(g, random_feeds(g, 2, 4))


def test_needs_int8_nhwc():
    b = GraphBuilder(OP)
    with pytest.raises(KilnError, match="int8 NHWC"):
        b.node(OP, [b.input("x", "float32", (1, 2, 2, 1))], size=(4, 4))
