"""QuantizedDiv (TFLite's int8 DIV): the reference against TFLite Micro one-op DIV models bit for
bit (broadcasts, fused activations, zero points at both ends, zero divisors, tiny quotients),
and the generated C against the reference, alone and fused after an int8 Add."""

from __future__ import annotations

import numpy as np
import pytest

import binary_testing as bt
from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from op_testing import assert_c_equals_reference, finish, graph_of_cases, random_feeds

OP = "QuantizedDiv"


def _quants(seed: int) -> list[tuple[float, int]]:
    """Random scales and zero points (the extremes included), the output scale sized to the
    quotients' range so that results do not only saturate."""
    rng = np.random.default_rng(seed)
    sa, sb = (float(np.float32(10 ** rng.uniform(-2.5, -0.5))) for _ in range(2))
    so = float(np.float32(sa / sb / 16 * rng.uniform(0.5, 2.0)))
    za, zb = (int(z) for z in rng.choice([-128, 127, *rng.integers(-128, 128, 4)], 2))
    return [(sa, za), (sb, zb), (so, int(rng.integers(-40, 41)))]


def _tflm(sa, sb, quants, activation, a, b) -> np.ndarray:
    from tflite_models import TensorSpec, run_tflm, single_op_model

    qa, qb, qo = quants
    model = single_op_model("DIV", [TensorSpec(sa, "int8", *qa), TensorSpec(sb, "int8", *qb)],
                            [TensorSpec(np.broadcast_shapes(sa, sb), "int8", *qo)],
                            {"fused_activation_function": bt.TFLITE_ACT[activation]})
    return run_tflm(model, a, b)[0]


def _check_tflm(sa, sb, activation, seed, feeds=None):
    quants = _quants(seed)
    g = graph_of_cases(OP, [bt.case(OP, sa, sb, activation, quants)])
    for feed in feeds or random_feeds(g, 2, seed):
        got = run_graph(g, feed)[g.outputs[0]]
        want = _tflm(sa, sb, quants, activation, feed["c0_a"], feed["c0_b"])
        np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))


@pytest.mark.parametrize("k,sa_sb", list(enumerate(bt.SHAPES)))
def test_int8_matches_tflm(k, sa_sb):
    _check_tflm(*sa_sb, "none", seed=400 + k)


@pytest.mark.parametrize("k,activation", list(enumerate(bt.ACTIVATIONS)))
def test_int8_fused_activation_matches_tflm(k, activation):
    _check_tflm((1, 4, 4, 8), (1, 1, 1, 8), activation, seed=500 + k)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_operand_pair_matches_tflm(seed):
    """All 65536 (a, b) pairs: zero divisors and the quotients whose final shift passes 31
    bits (TFLM's x86-64 reading of an undefined shift) among them."""
    a = np.repeat(np.arange(-128, 128, dtype=np.int8), 256).reshape(1, 65536)
    b = np.tile(np.arange(-128, 128, dtype=np.int8), 256).reshape(1, 65536)
    _check_tflm((1, 65536), (1, 65536), "none", seed=600 + seed, feeds=[{"c0_a": a, "c0_b": b}])


def _cases():
    cases = [bt.case(OP, sa, sb, "none", _quants(k)) for k, (sa, sb) in enumerate(bt.SHAPES)]
    return cases + [bt.case(OP, (1, 4, 4, 8), (1, 1, 1, 8), act, _quants(50 + k))
                    for k, act in enumerate(bt.ACTIVATIONS[1:])]


def test_generated_c_equals_reference():
    g = graph_of_cases(OP, _cases())
    assert_c_equals_reference(g, random_feeds(g, 2, 1))


def test_generated_c_every_operand_pair():
    b = GraphBuilder(OP)
    qa, qb, qo = (Quant.of(*q) for q in _quants(7))
    x, y = b.input("a", "int8", (65536,), qa), b.input("b", "int8", (65536,), qb)
    g = finish(b, b.node(OP, [x, y], activation="none", quant=qo))
    feed = {"a": np.repeat(np.arange(-128, 128, dtype=np.int8), 256),
            "b": np.tile(np.arange(-128, 128, dtype=np.int8), 256)}
    assert_c_equals_reference(g, [feed])


def test_fused_after_an_int8_add_equals_reference():
    """x + y then / z: the fusion planner may run both in one chain (kiln_div_s8 as a step)."""
    b = GraphBuilder("chain")
    q = Quant.of(0.05, -3)
    x, y, z = (b.input(n, "int8", (2, 3, 8), q) for n in "xyz")
    s = b.node("Add", [x, y], activation="none", quant=Quant.of(0.1, 2))
    g = finish(b, b.node(OP, [s, z], activation="relu", quant=Quant.of(0.2, -10)))
    assert_c_equals_reference(g, random_feeds(g, 3, 5))


def test_float_input_is_refused():
    from helpers import build_graph

    b = GraphBuilder(OP)
    g = finish(b, b.node(OP, [b.input("a", "float32", (4,)), b.input("b", "float32", (4,))], activation="none"))
    with pytest.raises(KilnError, match="needs int8") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name


def test_a_rescale_of_2_to_the_22_is_refused():
    from helpers import build_graph

    b = GraphBuilder(OP)
    x, y = b.input("a", "int8", (4,), Quant.of(1.0, 0)), b.input("b", "int8", (4,), Quant.of(1e-4, 0))
    g = finish(b, b.node(OP, [x, y], activation="none", quant=Quant.of(1e-4, 0)))
    with pytest.raises(KilnError, match="2\\*\\*22") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name
