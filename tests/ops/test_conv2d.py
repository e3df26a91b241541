"""Conv2D: float32 against onnxruntime, int8 against TFLite Micro, generated C against both.

The numpy reference is checked against an independent implementation (onnxruntime's Conv on
the NCHW transpose; TFLM's CONV_2D for int8), then the generated C of many layers at once
(one build) against the reference: within 1e-5 for float32, bit for bit for int8.
"""

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

# (input NHWC, weights OHWI, attributes, bias): stride 2, dilation, SAME/VALID and asymmetric pads.
CASES = [
    ((1, 7, 7, 3), (4, 3, 3, 3), {}, True),
    ((1, 8, 8, 3), (5, 3, 3, 3), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, True),  # TFLite SAME
    ((2, 6, 9, 4), (3, 3, 3, 4), {"pads": (1, 1, 1, 1), "activation": "relu6"}, False),
    ((1, 9, 8, 2), (4, 3, 2, 2), {"dilations": (2, 3), "pads": (2, 3, 2, 3)}, True),
    ((1, 5, 6, 8), (6, 1, 1, 8), {"strides": (2, 1), "activation": "relu"}, False),
    ((1, 6, 5, 3), (2, 3, 3, 3), {"strides": (1, 2), "pads": (2, 0, 1, 3), "activation": "relu_n1_to_1"}, True),
]
# Cases TFLite can express (VALID or SAME pads) for the TFLM comparison.
TFLITE_CASES = [CASES[0], CASES[1], CASES[2], CASES[4],
                ((1, 9, 9, 3), (4, 3, 3, 3), {"dilations": (2, 2), "pads": (2, 2, 2, 2)}, True),
                ((1, 7, 7, 4), (8, 3, 3, 4), {"strides": (2, 2), "pads": (1, 1, 1, 1), "activation": "relu6"}, True)]

ACT = {"none": (-np.inf, np.inf), "relu": (0, np.inf), "relu6": (0, 6), "relu_n1_to_1": (-1, 1)}


def onnx_conv(g, x: np.ndarray) -> np.ndarray:
    """onnxruntime's Conv of the graph's node on x, in NHWC (activation applied after)."""
    (node,) = g.nodes
    w = g.values[node.inputs[1]].data
    inits = {"W": w.transpose(0, 3, 1, 2).copy()}
    if len(node.inputs) > 2:
        inits["B"] = g.values[node.inputs[2]].data
    top, left, bottom, right = node.attrs["pads"]
    y = run_onnx_node("Conv", {"X": x.transpose(0, 3, 1, 2).copy()},
                      {"strides": list(node.attrs["strides"]), "dilations": list(node.attrs["dilations"]),
                       "pads": [top, left, bottom, right], "kernel_shape": list(w.shape[1:3])}, inits)
    lo, hi = ACT[node.attrs["activation"]]
    return np.clip(y.transpose(0, 2, 3, 1), lo, hi)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_float_reference_matches_onnxruntime(case):
    x_shape, w_shape, attrs, bias = CASES[case]
    g = float_layer("Conv2D", x_shape, w_shape, seed=case, bias=bias, **attrs)
    x = random_input(g)
    got = run_graph(g, {"x": x})[g.outputs[0]]
    want = onnx_conv(g, x)
    assert got.shape == want.shape and got.dtype == np.float32
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("case", range(len(TFLITE_CASES)))
@pytest.mark.parametrize("per_channel,in_zp", [(True, -128), (True, 17), (False, 0)])
def test_int8_reference_is_bit_exact_with_tflm(case, per_channel, in_zp):
    x_shape, w_shape, attrs, bias = TFLITE_CASES[case]
    g = int8_layer("Conv2D", x_shape, w_shape, seed=case, in_zp=in_zp, per_channel=per_channel,
                   bias=bias, **attrs)
    x = random_input(g, seed=case)
    got = run_graph(g, {"x": x})[g.outputs[0]]
    want = tflm_run_node(g, x)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 10  # real values, not a saturated output


def test_generated_c_equals_reference():
    """All cases, float32 and int8 (zero points -128 and 17, per-tensor and per-channel
    weights), in one build with ASan/UBSan."""
    graphs = [float_layer("Conv2D", xs, ws, seed=k, bias=b, **a) for k, (xs, ws, a, b) in enumerate(CASES)]
    graphs += [int8_layer("Conv2D", xs, ws, seed=k, bias=b, in_zp=(-128, 17)[k % 2],
                          per_channel=k != 2, **a) for k, (xs, ws, a, b) in enumerate(CASES)]
    g, ins, outs = merge(graphs)
    feeds = {i[0]: random_input(graph, seed=k) for k, (i, graph) in enumerate(zip(ins, graphs))}
    got = run_c(g, [feeds])[0]
    want = run_graph(g, feeds)
    for name in outs:
        if want[name].dtype == np.int8:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        else:
            assert np.abs(got[name] - want[name]).max() <= 1e-5 * np.abs(want[name]).max(), name


def test_padding_taps_read_the_input_zero_point():
    """With in_zp = -128 and an input of all -128 (real zero), every output is the bias
    alone: the folded offset is undone exactly on the border."""
    g = int8_layer("Conv2D", (1, 5, 5, 2), (3, 3, 3, 2), in_zp=-128, pads=(1, 1, 1, 1))
    x = np.full((1, 5, 5, 2), -128, np.int8)
    y = run_graph(g, {"x": x})[g.outputs[0]]
    assert (y == y[0, 2, 2]).all()  # border pixels equal the interior one
    np.testing.assert_array_equal(y, tflm_run_node(g, x))


def conv_graph(x_dtype="int8", w_dtype="int8", w_zp=0, axis=0, const_w=True, b_dtype="int32"):
    b = GraphBuilder("bad")
    x = b.input("x", x_dtype, (1, 4, 4, 2), Quant.of(0.1, 0) if x_dtype != "float32" else None)
    wq = Quant.of([0.1, 0.2, 0.3], w_zp, axis) if w_dtype == "int8" else None
    w = b.const("w", np.ones((3, 3, 3, 2)), w_dtype, quant=wq) if const_w else \
        b.input("w", w_dtype, (3, 3, 3, 2), wq)
    bias = b.const("b", np.zeros(3), b_dtype)
    oq = Quant.of(0.1, 0) if x_dtype != "float32" else None
    y = b.node("Conv2D", [x, w, bias], quant=oq)
    return b.output(y).build()


@pytest.mark.parametrize("kwargs,message", [
    ({"x_dtype": "int16"}, "int16"),
    ({"w_dtype": "float32"}, "float32 weights"),
    ({"w_zp": 3}, "zero point 3"),
    ({"axis": 3}, "axis 3"),
    ({"const_w": False}, "constant weights"),
    ({"b_dtype": "int8"}, "int32 bias"),
    ({"x_dtype": "float32", "w_dtype": "int8"}, "int8 tensor 'w'"),
])
def test_check_refuses_what_has_no_kernel(kwargs, message):
    g = conv_graph(**kwargs)
    with pytest.raises(KilnError, match=message) as err:
        get_op("Conv2D").check(g.nodes[0], g)
    assert err.value.node == g.nodes[0].name


def test_check_refuses_a_possible_accumulator_overflow():
    b = GraphBuilder("big")
    x = b.input("x", "int8", (1, 3, 3, 20000), Quant.of(0.1, 0))
    w = b.const("w", np.full((1, 3, 3, 20000), -127, np.int8), quant=Quant.of(0.01))
    g = b.output(b.node("Conv2D", [x, w], quant=Quant.of(1.0, 0))).build()
    with pytest.raises(KilnError, match="overflow"):
        get_op("Conv2D").check(g.nodes[0], g)


def test_shape_errors_and_macs():
    b = GraphBuilder("s")
    x = b.input("x", "float32", (1, 8, 8, 3))
    with pytest.raises(KilnError, match="input channels"):
        b.node("Conv2D", [x, b.const("w", np.zeros((4, 3, 3, 2), np.float32))])
    with pytest.raises(KilnError, match="bias"):
        b.node("Conv2D", [x, b.const("w", np.zeros((4, 3, 3, 3), np.float32)),
                          b.const("b", np.zeros(5, np.float32))])
    g = float_layer("Conv2D", (1, 8, 8, 3), (4, 3, 3, 3), strides=(2, 2))
    assert g.values[g.outputs[0]].shape == (1, 3, 3, 4)
    assert get_op("Conv2D").macs(g.nodes[0], g) == 3 * 3 * 4 * 27
