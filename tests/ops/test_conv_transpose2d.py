"""ConvTranspose2D: the reference against onnxruntime's ConvTranspose (strides, dilations,
groups, pads and an extended output), the generated C of all layers (one build) against the
reference."""

import numpy as np
import pytest

from codegen.ir import GraphBuilder, Quant, run_graph
from helpers import assert_c_matches_interpreter
from op_testing import assert_c_equals_reference, graph_of_cases, run_onnx_node

# (input NHWC, weights [O,KH,KW,C/g], groups, strides, dilations, pads top/left/bottom/right)
CASES = [((1, 3, 3, 2), (3, 3, 3, 2), 1, (1, 1), (1, 1), (0, 0, 0, 0)),
         ((2, 4, 3, 4), (6, 3, 2, 2), 2, (2, 3), (1, 1), (1, 0, 1, 2)),
         ((1, 3, 4, 3), (2, 2, 3, 3), 1, (2, 2), (2, 1), (0, 1, 0, 0)),
         ((1, 3, 3, 2), (2, 3, 3, 2), 1, (3, 2), (1, 1), (0, 0, -1, -1))]  # output_padding 1


def _weights(k):
    rng = np.random.default_rng(k)
    _, w_shape, *_ = CASES[k]
    return rng.standard_normal(w_shape).astype(np.float32), rng.standard_normal(w_shape[0]).astype(np.float32)


def _onnx(k, x):
    _, w_shape, groups, strides, dilations, pads = CASES[k]
    w, bias = _weights(k)
    og = w_shape[0] // groups
    # Kiln [O,KH,KW,C/g] -> ONNX [C, O/g, KH, KW]
    onnx_w = w.reshape(groups, og, w_shape[1], w_shape[2], w_shape[3]).transpose(0, 4, 1, 2, 3)
    onnx_w = onnx_w.reshape(groups * w_shape[3], og, w_shape[1], w_shape[2])
    attrs = {"group": groups, "strides": list(strides), "dilations": list(dilations)}
    top, left, bottom, right = pads
    if bottom < 0:
        attrs["output_padding"] = [-bottom, -right]
        bottom = right = 0
    attrs["pads"] = [top, left, bottom, right]
    y = run_onnx_node("ConvTranspose", {"X": x.transpose(0, 3, 1, 2).copy()}, attrs,
                      {"W": np.ascontiguousarray(onnx_w), "B": bias})
    return y.transpose(0, 2, 3, 1)


def test_conv_transpose_matches_onnxruntime_and_c():
    cases, feed = [], {}
    rng = np.random.default_rng(5)
    for k, (x_shape, _, groups, strides, dilations, pads) in enumerate(CASES):
        w, bias = _weights(k)
        cases.append(lambda b, p, k=k, x_shape=x_shape, w=w, bias=bias, groups=groups, strides=strides,
                     dilations=dilations, pads=pads: b.node(
            "ConvTranspose2D", [b.input(f"{p}x", "float32", x_shape), b.const(f"{p}w", w), b.const(f"{p}b", bias)],
            groups=groups, strides=strides, dilations=dilations, pads=pads))
        feed[f"c{k}_x"] = rng.standard_normal(x_shape).astype(np.float32)
    g = graph_of_cases("conv_transpose", cases)
    got = run_graph(g, feed)
    for k in range(len(CASES)):
        want = _onnx(k, feed[f"c{k}_x"])
        assert got[g.outputs[k]].shape == want.shape
        np.testing.assert_allclose(got[g.outputs[k]], want, rtol=0, atol=1e-5 * float(np.abs(want).max()))
    assert_c_equals_reference(g, [feed])


@pytest.mark.parametrize("x_shape, w_shape, strides, pads, activation", [
    ((1, 3, 4, 3), (4, 3, 3, 3), (2, 2), (1, 1, 1, 0), "none"),
    ((2, 2, 3, 2), (3, 2, 3, 2), (3, 2), (0, 0, 0, 0), "relu"),
    ((1, 4, 4, 5), (2, 1, 1, 5), (1, 1), (0, 0, 0, 0), "relu6")])
def test_int16_generated_c_equals_reference(x_shape, w_shape, strides, pads, activation):
    """16x8 (int16 activations, per-channel int8 weights, int64 bias) under ASan/UBSan; its
    bit-exactness with TFLite Micro: the TRANSPOSE_CONV int16 cases of tests/tflite_case_table.py."""
    rng = np.random.default_rng(sum(x_shape))
    b = GraphBuilder("ct16")
    x = b.input("x", "int16", x_shape, Quant.of(0.004, 0))
    w = b.const("w", rng.integers(-127, 128, w_shape).astype(np.int8),
                quant=Quant.of(list(rng.uniform(0.002, 0.02, w_shape[0])), 0, 0))
    bias = b.const("b", rng.integers(-30000, 30000, w_shape[0]).astype(np.int64))
    y = b.node("ConvTranspose2D", [x, w, bias], strides=strides, pads=pads, activation=activation,
               quant=Quant.of(0.03, 0))
    assert_c_matches_interpreter(b.output(y).build(), count=2)
