"""MatMul: numpy broadcasting of batch dimensions, against onnxruntime and in generated C."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from codegen.ops.registry import get_op
from helpers import run_c
from linear_testing import merge
from op_testing import run_onnx_node

# (a shape, b shape, b constant?)
CASES = [
    ((3, 4), (4, 5), True),
    ((2, 3, 4), (4, 6), True),           # batched a, shared b (a linear layer on a sequence)
    ((2, 1, 3, 4), (5, 4, 2), False),    # batch dims broadcast both ways: [2, 5, 3, 2]
    ((4,), (2, 4, 3), False),            # 1-D a: a row, dropped from the result
    ((2, 3, 4), (4,), True),             # 1-D b: a column, dropped from the result
    ((2, 1, 3, 1, 2, 3, 7), (3, 5, 2, 7, 2), False),  # five batch dims, four after dropping 1s
    ((2, 3, 4, 2, 3), (2, 3, 4, 3, 2), True),        # equal batch dims: coalesced into one
]


def graph(a_shape, b_shape, b_const, seed=0):
    rng = np.random.default_rng(seed)
    b = GraphBuilder("mm")
    a = b.input("a", "float32", a_shape)
    bb = b.const("b", rng.standard_normal(b_shape).astype(np.float32)) if b_const else \
        b.input("b", "float32", b_shape)
    return b.output(b.node("MatMul", [a, bb])).build()


def feeds(g, seed=1):
    rng = np.random.default_rng(seed)
    return {i: rng.standard_normal(g.values[i].shape).astype(np.float32) for i in g.inputs}


@pytest.mark.parametrize("case", CASES)
def test_reference_matches_onnxruntime(case):
    g = graph(*case)
    f = feeds(g)
    got = run_graph(g, f)[g.outputs[0]]
    inits = {} if case[2] is False else {"b": g.values["b"].data}
    want = run_onnx_node("MatMul", f, initializers=inits)
    assert got.shape == want.shape == g.values[g.outputs[0]].shape
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


def test_generated_c_equals_reference():
    graphs = [graph(*c, seed=k) for k, c in enumerate(CASES)]
    g, _, outs = merge(graphs)
    f = feeds(g)
    got = run_c(g, [f])[0]
    want = run_graph(g, f)
    for name in outs:
        assert np.abs(got[name] - want[name]).max() <= 1e-5 * np.abs(want[name]).max(), name


def test_shape_errors_and_unquantized_int8_refused():
    b = GraphBuilder("bad")
    a = b.input("a", "float32", (2, 3, 4))
    with pytest.raises(KilnError, match="inner dimensions 4 and 5"):
        b.node("MatMul", [a, b.input("b", "float32", (5, 2))])
    with pytest.raises(KilnError, match="do not broadcast"):
        b.node("MatMul", [a, b.input("c", "float32", (3, 4, 2))])
    q = b.input("q", "int8", (2, 4))
    y = b.node("MatMul", [q, b.const("w", np.ones((4, 2), np.int8))])
    g = b.output(y).build()
    with pytest.raises(KilnError, match="int8 tensor 'q' has no quantization") as err:
        get_op("MatMul").check(g.nodes[0], g)
    assert err.value.node == g.nodes[0].name


def test_int8_generated_c_equals_reference():
    """TFLM's int8 BatchMatMul (its bit-exactness with TFLite Micro:
    tests/frontends/test_tflite_int8_fixed_point.py): the C kernel equals the reference."""
    from codegen.ir import Quant

    graphs = []
    for k, (sa, sb, _) in enumerate(CASES[:3] + CASES[6:]):
        b = GraphBuilder("mm")
        x = b.input("a", "int8", sa, Quant.of(0.05, -3 + k))
        y = b.input("b", "int8", sb, Quant.of(0.02, 5 - k))
        graphs.append(b.output(b.node("MatMul", [x, y], quant=Quant.of(0.05 * sa[-1] ** 0.5, -10))).build())
    g, _, outs = merge(graphs)
    rng = np.random.default_rng(3)
    f = {i: rng.integers(-128, 128, g.values[i].shape).astype(np.int8) for i in g.inputs}
    got, want = run_c(g, [f])[0], run_graph(g, f)
    for name in outs:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        assert len(np.unique(want[name])) > 10, name


def test_int16_generated_c_equals_reference():
    """TFLM's int16 BatchMatMul (its bit-exactness with TFLite Micro: the BATCH_MATMUL int16
    cases of tests/tflite_case_table.py): the C kernel equals the reference, a 1-D operand and
    a 1000-long sum included."""
    from codegen.ir import Quant

    graphs = []
    for k, (sa, sb, _) in enumerate(CASES + [((2, 1000), (1000, 3), False)]):
        b = GraphBuilder("mm")
        x = b.input("a", "int16", sa, Quant.of(0.002, 0))
        b_scale = 0.003 + 0.001 * k
        y = b.input("b", "int16", sb, Quant.of(b_scale, 0))  # output scale: about 3 sigma of the sums
        graphs.append(b.output(b.node("MatMul", [x, y], quant=Quant.of(70 * b_scale * sa[-1] ** 0.5, 0))).build())
    g, _, outs = merge(graphs)
    rng = np.random.default_rng(4)
    f = {i: rng.integers(-32768, 32768, g.values[i].shape).astype(np.int16) for i in g.inputs}
    got, want = run_c(g, [f])[0], run_graph(g, f)
    for name in outs:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        assert len(np.unique(want[name])) > min(10, want[name].size - 2), name


@pytest.mark.parametrize("zp, k, message", [(3, 4, "zero point 0"), (0, 1 << 17, "2\\*\\*47")])
def test_int16_refuses_zero_points_and_overlong_sums(zp, k, message):
    from codegen.ir import Quant

    b = GraphBuilder("bad16")
    x = b.input("a", "int16", (1, k), Quant.of(0.002, zp))
    y = b.node("MatMul", [x, b.input("b", "int16", (k, 1), Quant.of(0.002, 0))], quant=Quant.of(1.0, 0))
    g = b.output(y).build()
    with pytest.raises(KilnError, match=message):
        get_op("MatMul").check(g.nodes[0], g)


def test_macs():
    g = graph((2, 1, 3, 4), (5, 4, 2), False)
    assert get_op("MatMul").macs(g.nodes[0], g) == 2 * 5 * 3 * 2 * 4
