"""SquaredDifference: float32 against numpy's (a - b) * (a - b) in float32, int8 and int16 against
TFLite Micro one-op SQUARED_DIFFERENCE models bit for bit, and the generated C against the
numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

import binary_testing as bt
from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from op_testing import assert_c_equals_reference, finish, graph_of_cases, random_feeds

OP = "SquaredDifference"


def _quants(seed: int) -> list[tuple[float, int]]:
    """Random scales and zero points, the output scale sized to the squares' range."""
    rng = np.random.default_rng(seed)
    sa, sb = (float(np.float32(10 ** rng.uniform(-2.5, -0.5))) for _ in range(2))
    so = float(np.float32((128 * (sa + sb)) ** 2 / 255 * rng.uniform(0.05, 0.3)))
    za, zb = (int(z) for z in rng.integers(-128, 128, 2))
    return [(sa, za), (sb, zb), (so, int(rng.integers(-128, -100)))]


@pytest.mark.parametrize("sa,sb", bt.SHAPES)
def test_float_is_the_rounded_difference_squared(sa, sb):
    g = graph_of_cases(OP, [bt.case(OP, sa, sb, "none")])
    for feed in random_feeds(g, 2, 0):
        d = np.subtract(feed["c0_a"], feed["c0_b"], dtype=np.float32)
        np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], d * d)


@pytest.mark.parametrize("k,sa_sb", list(enumerate(bt.SHAPES)))
def test_int8_matches_tflm(k, sa_sb):
    from tflite_models import TensorSpec, run_tflm, single_op_model

    sa, sb = sa_sb
    quants = _quants(300 + k)
    g = graph_of_cases(OP, [bt.case(OP, sa, sb, "none", quants)])
    model = single_op_model("SQUARED_DIFFERENCE", [TensorSpec(sa, "int8", *quants[0]), TensorSpec(sb, "int8", *quants[1])],
                            [TensorSpec(np.broadcast_shapes(sa, sb), "int8", *quants[2])])
    for feed in random_feeds(g, 2, k):
        got = run_graph(g, feed)[g.outputs[0]]
        want = run_tflm(model, feed["c0_a"], feed["c0_b"])[0]
        np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_generated_c_equals_reference(dtype):
    cases = [bt.case(OP, sa, sb, "none", _quants(k) if dtype == "int8" else None) for k, (sa, sb) in enumerate(bt.SHAPES)]
    g = graph_of_cases(OP, cases)
    assert_c_equals_reference(g, random_feeds(g, 2, 1))


def _int16_case(sa, sb, quants):
    def build(b: GraphBuilder, prefix: str) -> str:
        qa, qb, qo = (Quant.of(*q) for q in quants)
        return b.node(OP, [b.input(f"{prefix}a", "int16", sa, qa), b.input(f"{prefix}b", "int16", sb, qb)],
                      activation="none", quant=qo)
    return build


# int16 zero points are 0 (TFLM requires it); (a scale, b scale, out scale): equal scales, a
# coarse output, an output so fine that the squares saturate at both ends.
INT16_SCALES = [(0.002, 0.002, 0.01), (0.001, 0.003, 0.5), (0.01, 0.0001, 20.0), (0.5, 0.5, 1e-4)]


@pytest.mark.parametrize("k,scales", list(enumerate(INT16_SCALES)))
def test_int16_matches_tflm(k, scales):
    from tflite_models import TensorSpec, run_tflm, single_op_model

    sa, sb = bt.SHAPES[k + 1]
    quants = [(s, 0) for s in scales]
    g = graph_of_cases(OP, [_int16_case(sa, sb, quants)])
    model = single_op_model("SQUARED_DIFFERENCE", [TensorSpec(sa, "int16", *quants[0]), TensorSpec(sb, "int16", *quants[1])],
                            [TensorSpec(np.broadcast_shapes(sa, sb), "int16", *quants[2])])
    for feed in random_feeds(g, 2, k):
        got = run_graph(g, feed)[g.outputs[0]]
        want = run_tflm(model, feed["c0_a"], feed["c0_b"])[0]
        np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))


def test_int16_generated_c_equals_reference():
    g = graph_of_cases(OP, [_int16_case(sa, sb, [(s, 0) for s in INT16_SCALES[k % len(INT16_SCALES)]])
                            for k, (sa, sb) in enumerate(bt.SHAPES)])
    assert_c_equals_reference(g, random_feeds(g, 2, 3))


def test_int16_nonzero_zero_point_is_refused():
    from helpers import build_graph

    b = GraphBuilder(OP)
    x, y = b.input("a", "int16", (4,), Quant.of(0.01, 3)), b.input("b", "int16", (4,), Quant.of(0.01, 0))
    g = finish(b, b.node(OP, [x, y], activation="none", quant=Quant.of(0.01, 0)))
    with pytest.raises(KilnError, match="zero point 3"):
        build_graph(g)


def test_fused_activation_is_refused():
    b = GraphBuilder(OP)
    g = finish(b, b.node(OP, [b.input("a", "float32", (4,)), b.input("b", "float32", (4,))], activation="relu"))
    from helpers import build_graph

    with pytest.raises(KilnError, match="no fused activation"):
        build_graph(g)
