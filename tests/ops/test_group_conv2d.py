"""GroupConv2D: the reference against onnxruntime's grouped Conv (NCHW transposes around it),
the generated C of several layers (one build) against the reference."""

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from op_testing import assert_c_equals_reference, graph_of_cases, run_onnx_node

# (input NHWC, weights [O,KH,KW,C/g], groups, attributes)
CASES = [((1, 6, 6, 4), (6, 3, 3, 2), 2, {}),
         ((2, 7, 5, 6), (9, 3, 2, 2), 3, {"strides": (2, 1), "pads": (1, 0, 1, 1), "activation": "relu"}),
         ((1, 8, 8, 8), (4, 3, 3, 2), 4, {"dilations": (2, 2), "pads": (2, 2, 2, 2)})]


def _case(k):
    x_shape, w_shape, groups, attrs = CASES[k]
    rng = np.random.default_rng(k)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bias = rng.standard_normal(w_shape[0]).astype(np.float32)
    return x_shape, w, bias, groups, attrs


def test_group_conv_matches_onnxruntime_and_c():
    cases, feed = [], {}
    rng = np.random.default_rng(9)
    for k in range(len(CASES)):
        x_shape, w, bias, groups, attrs = _case(k)
        cases.append(lambda b, p, x_shape=x_shape, w=w, bias=bias, groups=groups, attrs=attrs: b.node(
            "GroupConv2D", [b.input(f"{p}x", "float32", x_shape), b.const(f"{p}w", w), b.const(f"{p}b", bias)],
            groups=groups, **attrs))
        feed[f"c{k}_x"] = rng.standard_normal(x_shape).astype(np.float32)
    g = graph_of_cases("group_conv", cases)
    got = run_graph(g, feed)
    for k in range(len(CASES)):
        x_shape, w, bias, groups, attrs = _case(k)
        top, left, bottom, right = attrs.get("pads", (0, 0, 0, 0))
        y = run_onnx_node("Conv", {"X": feed[f"c{k}_x"].transpose(0, 3, 1, 2).copy()},
                          {"group": groups, "strides": list(attrs.get("strides", (1, 1))),
                           "dilations": list(attrs.get("dilations", (1, 1))), "pads": [top, left, bottom, right]},
                          {"W": w.transpose(0, 3, 1, 2).copy(), "B": bias}).transpose(0, 2, 3, 1)
        if attrs.get("activation") == "relu":
            y = np.maximum(y, 0)
        np.testing.assert_allclose(got[g.outputs[k]], y, rtol=0, atol=1e-5 * float(np.abs(y).max()))
    assert_c_equals_reference(g, [feed])


def test_groups_must_divide_the_channels():
    b = GraphBuilder("bad_groups")
    with pytest.raises(KilnError, match="groups"):
        b.node("GroupConv2D", [b.input("x", "float32", (1, 4, 4, 6)), b.const("w", np.ones((4, 1, 1, 3), np.float32))],
               groups=4)
