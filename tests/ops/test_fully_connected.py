"""FullyConnected: float32 against onnxruntime (Gemm), int8 against TFLite Micro (per-tensor
and per-channel weights), generated C against the reference (one build for all cases)."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.ops.registry import get_op
from helpers import run_c
from linear_testing import float_layer, int8_layer, merge, random_input
from op_testing import run_onnx_node
from tflm_layers import tflm_run_node

# (input, weights [O,K], attributes, bias)
CASES = [
    ((1, 40), (10, 40), {}, True),
    ((3, 16), (7, 16), {"activation": "relu"}, False),
    ((2, 3, 12), (5, 12), {"keep_dims": True, "activation": "relu6"}, True),
    ((2, 2, 3, 4), (6, 12), {}, True),  # rows of K = 12 across the last axes: output [4, 6]
    ((1, 1, 1, 300), (4, 300), {"activation": "relu_n1_to_1"}, False),
]
ACT = {"none": (-np.inf, np.inf), "relu": (0, np.inf), "relu6": (0, 6), "relu_n1_to_1": (-1, 1)}


def onnx_fc(g, x: np.ndarray) -> np.ndarray:
    (node,) = g.nodes
    w = g.values[node.inputs[1]].data
    inits = {"B": w}
    if len(node.inputs) > 2:
        inits["C"] = g.values[node.inputs[2]].data
    y = run_onnx_node("Gemm", {"A": x.reshape(-1, w.shape[1])}, {"transB": 1}, inits)
    lo, hi = ACT[node.attrs["activation"]]
    return np.clip(y, lo, hi).reshape(g.values[node.outputs[0]].shape)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_float_reference_matches_onnxruntime(case):
    x_shape, w_shape, attrs, bias = CASES[case]
    g = float_layer("FullyConnected", x_shape, w_shape, seed=case, bias=bias, **attrs)
    x = random_input(g)
    got = run_graph(g, {"x": x})[g.outputs[0]]
    want = onnx_fc(g, x)
    assert got.shape == want.shape and got.dtype == np.float32
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


def test_output_shapes():
    shapes = [float_layer("FullyConnected", xs, ws, **a) for xs, ws, a, _ in CASES]
    assert [g.values[g.outputs[0]].shape for g in shapes] == [(1, 10), (3, 7), (2, 3, 5), (4, 6), (1, 4)]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("per_channel,in_zp", [(False, -128), (False, 31), (True, -7)])
def test_int8_reference_is_bit_exact_with_tflm(case, per_channel, in_zp):
    x_shape, w_shape, attrs, bias = CASES[case]
    g = int8_layer("FullyConnected", x_shape, w_shape, seed=case, in_zp=in_zp,
                   per_channel=per_channel, bias=bias, **attrs)
    x = random_input(g, seed=case)
    got = run_graph(g, {"x": x})[g.outputs[0]]
    want = tflm_run_node(g, x)
    np.testing.assert_array_equal(got, want.reshape(got.shape))
    assert len(np.unique(got)) >= min(8, got.size // 4)


def test_per_tensor_multiplier_uses_tflm_float_product():
    """Per-tensor FC rescales by float(s_in * s_w) / s_out (TFLM GetQuantizedConvolution-
    Multipler), per-channel by double products: pick scales where the two differ."""
    from codegen.quant.linear import linear_int8_params

    b = GraphBuilder("fc")
    x = b.input("x", "int8", (1, 4), Quant.of(0.1, 0))
    w = b.const("w", np.ones((2, 4), np.int8), quant=Quant.of(0.3))
    y = b.node("FullyConnected", [x, w], quant=Quant.of(0.7, 0))
    g = b.output(y).build()
    per_tensor = linear_int8_params(g.nodes[0], g, 2, fc_per_tensor=True)
    double = linear_int8_params(g.nodes[0], g, 2, fc_per_tensor=False)
    assert per_tensor.multiplier[0] != double.multiplier[0]


def test_generated_c_equals_reference():
    graphs = [float_layer("FullyConnected", xs, ws, seed=k, bias=b, **a) for k, (xs, ws, a, b) in enumerate(CASES)]
    graphs += [int8_layer("FullyConnected", xs, ws, seed=k, bias=b, in_zp=(-128, 31)[k % 2],
                          per_channel=k % 2 == 0, **a) for k, (xs, ws, a, b) in enumerate(CASES)]
    g, ins, outs = merge(graphs)
    feeds = {i[0]: random_input(graph, seed=k) for k, (i, graph) in enumerate(zip(ins, graphs))}
    got = run_c(g, [feeds])[0]
    want = run_graph(g, feeds)
    for name in outs:
        if want[name].dtype == np.int8:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        else:
            assert np.abs(got[name] - want[name]).max() <= 1e-5 * np.abs(want[name]).max(), name


def test_check_and_shape_errors():
    b = GraphBuilder("bad")
    x = b.input("x", "int8", (2, 10), Quant.of(0.1, 0))
    with pytest.raises(KilnError, match="rows of 3"):
        b.node("FullyConnected", [x, b.const("w", np.ones((4, 3), np.int8))])
    with pytest.raises(KilnError, match="keep_dims"):
        b.node("FullyConnected", [x, b.const("w", np.ones((3, 5), np.int8))], keep_dims=True)
    w = b.const("w", np.ones((3, 10), np.int8), quant=Quant.of(0.1, 0))
    y = b.node("FullyConnected", [x, w], quant=Quant.of(0.1, 0, None))
    h = b.input("h", "int16", (2, 10), Quant.of(0.1, 5))  # 16x8 needs symmetric int16 activations
    y16 = b.node("FullyConnected", [h, w], quant=Quant.of(0.1, 0))
    g = b.output(y, y16).build()
    get_op("FullyConnected").check(g.nodes[0], g)  # fine
    with pytest.raises(KilnError, match="int16") as err:
        get_op("FullyConnected").check(g.nodes[1], g)
    assert err.value.node == g.nodes[1].name


def test_macs():
    g = float_layer("FullyConnected", (2, 3, 12), (5, 12), keep_dims=True)
    assert get_op("FullyConnected").macs(g.nodes[0], g) == 6 * 5 * 12
