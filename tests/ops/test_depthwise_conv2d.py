"""DepthwiseConv2D: float32 against onnxruntime (grouped Conv), int8 against TFLite Micro,
generated C against the reference (one build for all cases)."""

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

# (input NHWC, weights [1,KH,KW,C*M], attributes, bias)
CASES = [
    ((1, 7, 7, 4), (1, 3, 3, 4), {"pads": (1, 1, 1, 1)}, True),
    ((1, 8, 8, 3), (1, 3, 3, 6), {"depth_multiplier": 2, "strides": (2, 2), "pads": (0, 0, 1, 1)}, True),
    ((2, 6, 9, 2), (1, 3, 3, 6), {"depth_multiplier": 3, "activation": "relu6"}, False),
    ((1, 9, 8, 5), (1, 3, 2, 5), {"dilations": (2, 3), "pads": (2, 3, 2, 3), "activation": "relu"}, True),
    ((1, 6, 5, 4), (1, 5, 3, 8), {"depth_multiplier": 2, "strides": (1, 2), "pads": (2, 0, 3, 1)}, False),
]
TFLITE_CASES = CASES[:3] + [
    ((1, 9, 9, 4), (1, 3, 3, 4), {"dilations": (2, 2), "pads": (2, 2, 2, 2), "activation": "relu"}, True),
    ((1, 10, 10, 8), (1, 3, 3, 8), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, True),
]
ACT = {"none": (-np.inf, np.inf), "relu": (0, np.inf), "relu6": (0, 6), "relu_n1_to_1": (-1, 1)}


def onnx_depthwise(g, x: np.ndarray) -> np.ndarray:
    """onnxruntime's Conv with group = C on the NCHW transpose, back in NHWC."""
    (node,) = g.nodes
    w = g.values[node.inputs[1]].data  # [1, KH, KW, C*M]
    inits = {"W": w[0].transpose(2, 0, 1)[:, None].copy()}  # [C*M, 1, KH, KW]
    if len(node.inputs) > 2:
        inits["B"] = g.values[node.inputs[2]].data
    y = run_onnx_node("Conv", {"X": x.transpose(0, 3, 1, 2).copy()},
                      {"strides": list(node.attrs["strides"]), "dilations": list(node.attrs["dilations"]),
                       "pads": list(node.attrs["pads"]), "group": x.shape[3],
                       "kernel_shape": list(w.shape[1:3])}, inits)
    lo, hi = ACT[node.attrs["activation"]]
    return np.clip(y.transpose(0, 2, 3, 1), lo, hi)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_float_reference_matches_onnxruntime(case):
    x_shape, w_shape, attrs, bias = CASES[case]
    g = float_layer("DepthwiseConv2D", x_shape, w_shape, seed=case, bias=bias, **attrs)
    x = random_input(g)
    got = run_graph(g, {"x": x})[g.outputs[0]]
    want = onnx_depthwise(g, x)
    assert got.shape == want.shape and got.dtype == np.float32
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("case", range(len(TFLITE_CASES)))
@pytest.mark.parametrize("per_channel,in_zp", [(True, -128), (True, 9), (False, 0)])
def test_int8_reference_is_bit_exact_with_tflm(case, per_channel, in_zp):
    x_shape, w_shape, attrs, bias = TFLITE_CASES[case]
    g = int8_layer("DepthwiseConv2D", x_shape, w_shape, seed=case, in_zp=in_zp,
                   per_channel=per_channel, bias=bias, **attrs)
    x = random_input(g, seed=case)
    got = run_graph(g, {"x": x})[g.outputs[0]]
    np.testing.assert_array_equal(got, tflm_run_node(g, x))
    assert len(np.unique(got)) > 10


def test_generated_c_equals_reference():
    graphs = [float_layer("DepthwiseConv2D", xs, ws, seed=k, bias=b, **a)
              for k, (xs, ws, a, b) in enumerate(CASES)]
    graphs += [int8_layer("DepthwiseConv2D", xs, ws, seed=k, bias=b, in_zp=(-128, 23)[k % 2],
                          per_channel=k != 1, **a) for k, (xs, ws, a, b) in enumerate(CASES)]
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
    x = b.input("x", "int8", (1, 4, 4, 2), Quant.of(0.1, 0))
    with pytest.raises(KilnError, match="depth_multiplier"):
        b.node("DepthwiseConv2D", [x, b.const("w", np.ones((1, 3, 3, 6), np.int8))], depth_multiplier=2)
    with pytest.raises(KilnError, match=r"\[1,KH,KW,C\*M\]"):
        b.node("DepthwiseConv2D", [x, b.const("w", np.ones((2, 3, 3, 2), np.int8))])
    # weights per channel along axis 0 (Conv2D's axis) instead of 3
    w = b.const("w", np.ones((1, 3, 3, 2), np.int8), quant=Quant.of([0.1, 0.2], 0, 0))
    y = b.node("DepthwiseConv2D", [x, w], quant=Quant.of(0.1, 0))
    g = b.output(y).build()
    with pytest.raises(KilnError, match="axis 3") as err:
        get_op("DepthwiseConv2D").check(g.nodes[0], g)
    assert err.value.node == g.nodes[0].name


def test_macs():
    g = float_layer("DepthwiseConv2D", (1, 8, 8, 3), (1, 3, 3, 6), depth_multiplier=2, pads=(1, 1, 1, 1))
    assert get_op("DepthwiseConv2D").macs(g.nodes[0], g) == 8 * 8 * 6 * 9
