"""DeformConv2D: the reference against ONNX's reference implementation (groups, offset groups,
strides, dilations, pads, mask), the generated C against the reference with offsets reaching
far outside the input."""

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from helpers import run_c

# (x shape, w shape, attributes)
CASES = [
    ((1, 2, 5, 5), (3, 2, 2, 2), dict(strides=(1, 1), dilations=(1, 1), pads=(0, 0, 0, 0), group=1, offset_group=1)),
    ((2, 4, 6, 5), (4, 2, 3, 2), dict(strides=(2, 1), dilations=(1, 2), pads=(1, 0, 1, 2), group=2, offset_group=2)),
    ((1, 4, 4, 4), (2, 4, 2, 2), dict(strides=(1, 1), dilations=(1, 1), pads=(1, 1, 1, 1), group=1, offset_group=4)),
]


def case_arrays(xs, ws, attrs, rng, spread=1.5):
    """Random inputs of one case; offsets of standard deviation `spread` pixels."""
    oh, ow = ((xs[2 + d] + attrs["pads"][d] + attrs["pads"][2 + d] - (ws[2 + d] - 1) * attrs["dilations"][d] - 1)
              // attrs["strides"][d] + 1 for d in range(2))
    taps = attrs["offset_group"] * ws[2] * ws[3]
    return {"x": rng.standard_normal(xs).astype(np.float32), "w": rng.standard_normal(ws).astype(np.float32),
            "off": (rng.standard_normal((xs[0], 2 * taps, oh, ow)) * spread).astype(np.float32),
            "b": rng.standard_normal(ws[0]).astype(np.float32),
            "m": rng.uniform(0, 1, (xs[0], taps, oh, ow)).astype(np.float32)}


def graph_of(feed, attrs):
    b = GraphBuilder("deform")
    y = b.node("DeformConv2D", [b.input(k, "float32", v.shape) for k, v in feed.items()], **attrs)
    return b.output(y).build(), y


@pytest.mark.parametrize("case", range(len(CASES)))
def test_reference_matches_onnx_reference(case):
    xs, ws, attrs = CASES[case]
    feed = case_arrays(xs, ws, attrs, np.random.default_rng(case))
    g, y = graph_of(feed, attrs)
    node = helper.make_node("DeformConv", ["x", "w", "off", "b", "m"], ["y"], kernel_shape=list(ws[2:]),
                            strides=list(attrs["strides"]), dilations=list(attrs["dilations"]),
                            pads=list(attrs["pads"]), group=attrs["group"], offset_group=attrs["offset_group"])
    want = ReferenceEvaluator(node, opsets={"": 19}).run(None, feed)[0]
    np.testing.assert_allclose(run_graph(g, feed)[y], want, rtol=1e-4, atol=1e-5)


def test_c_matches_reference():
    for k, (xs, ws, attrs) in enumerate(CASES):
        feed = case_arrays(xs, ws, attrs, np.random.default_rng(10 + k), spread=4.0)  # far outside too
        g, y = graph_of(feed, attrs)
        (out,) = run_c(g, [feed])
        np.testing.assert_allclose(out[y], run_graph(g, feed)[y], rtol=1e-5, atol=1e-5)


def test_group_mismatch_is_refused():
    xs, ws, attrs = CASES[0]
    feed = case_arrays(xs, ws, attrs, np.random.default_rng(0))
    with pytest.raises(KilnError, match="do not fit 2 input channels"):
        graph_of(feed, {**attrs, "group": 2})
