"""Conv2DAdd (made by the fusion planner from a Conv2D and the Add reading it): its numpy
reference is the unfused pair's, step by step, and the generated C (reference kernel, one build
of several layers) equals the reference bit for bit; the DSP kernel is checked against the
reference kernel in QEMU by tests/core/test_variant_kernels.py."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, Quant, run_graph
from helpers import run_c
from linear_testing import int8_conv_add, merge

CASES = [
    ((1, 7, 7, 3), (8, 3, 3, 3), {"pads": (1, 1, 1, 1)}, True, "relu"),
    ((1, 8, 8, 4), (6, 3, 3, 4), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, False, "none"),
    ((2, 5, 6, 8), (5, 1, 1, 8), {"activation": "relu"}, True, "relu6"),
]


def _unfused(g):
    """The same computation as a Conv2D then an Add (the inputs in the fused node's order)."""
    (node,) = g.nodes
    b = GraphBuilder("unfused")
    x = b.input("x", "int8", g.values["x"].shape, g.values["x"].quant)
    r = b.input("r", "int8", g.values["r"].shape, g.values["r"].quant)
    consts = [b.const(i, g.values[i].data, quant=g.values[i].quant) for i in node.inputs[1:3] if i]
    conv_attrs = {k: node.attrs[k] for k in ("strides", "dilations", "pads", "activation")}
    mid = b.node("Conv2D", [x, *consts], quant=node.attrs["conv_quant"], **conv_attrs)
    pair = [mid, r] if node.attrs["conv_first"] else [r, mid]
    y = b.node("Add", pair, activation=node.attrs["add_activation"], quant=g.values[node.outputs[0]].quant)
    return b.output(y).build()


@pytest.mark.parametrize("x_shape, w_shape, attrs, conv_first, act", CASES)
def test_reference_is_the_unfused_pair(x_shape, w_shape, attrs, conv_first, act):
    g = int8_conv_add(x_shape, w_shape, seed=sum(x_shape), conv_first=conv_first, add_activation=act, **attrs)
    u = _unfused(g)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        feed = {n: rng.integers(-128, 128, g.values[n].shape, dtype=np.int8) for n in ("x", "r")}
        (want,) = run_graph(u, feed).values()
        (got,) = run_graph(g, feed).values()
        np.testing.assert_array_equal(got, want)
        assert np.unique(got).size > 8  # real values, not one saturated level


def test_generated_c_matches_the_reference():
    graphs = [int8_conv_add(x, w, seed=k, conv_first=f, add_activation=a, **attrs)
              for k, (x, w, attrs, f, a) in enumerate(CASES)]
    g, _, outs = merge(graphs)
    rng = np.random.default_rng(5)
    samples = [{n: rng.integers(-128, 128, g.values[n].shape, dtype=np.int8) for n in g.inputs} for _ in range(2)]
    for sample, got in zip(samples, run_c(g, samples)):
        want = run_graph(g, sample)
        for name in outs:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def test_residual_of_another_shape_is_refused():
    g = int8_conv_add((1, 5, 5, 4), (4, 1, 1, 4), seed=1)
    (node,) = g.nodes
    b = GraphBuilder("bad")
    x = b.input("x", "int8", (1, 5, 5, 4), g.values["x"].quant)
    r = b.input("r", "int8", (1, 5, 5, 2), Quant.of(0.1, 0))
    consts = [b.const(i, g.values[i].data, quant=g.values[i].quant) for i in node.inputs[1:3]]
    with pytest.raises(KilnError, match="residual"):
        b.node("Conv2DAdd", [x, *consts, r], quant=Quant.of(0.1, 0), conv_quant=node.attrs["conv_quant"])
