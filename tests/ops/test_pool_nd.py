"""PoolND: the reference against ONNX's reference implementation (which made the backend tests'
expected outputs: ceil-mode windows, dilations, pads counted or not) and onnxruntime, and the
generated C against the reference, indices bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from helpers import run_c

ONNX_OP = {"max": "MaxPool", "average": "AveragePool", "lp": "LpPool"}
# (mode, input shape, kernel, strides, dilations, pads, ceil_mode, count_include_pad)
CASES = [
    ("max", (1, 2, 5, 6, 7), (2, 3, 2), (2, 1, 2), (1, 1, 1), (0, 1, 0, 1, 1, 1), False, False),
    ("max", (2, 1, 9, 8), (3, 2), (2, 3), (2, 2), (1, 0, 0, 1), True, False),
    ("max", (1, 3, 11), (3,), (2,), (3,), (2, 2), True, False),
    ("average", (1, 2, 7, 6, 5), (3, 2, 2), (2, 2, 2), (2, 1, 1), (1, 0, 1, 1, 1, 0), True, True),
    ("average", (1, 2, 7, 6, 5), (3, 2, 2), (3, 2, 1), (1, 2, 1), (1, 1, 1, 0, 1, 1), True, False),
    ("average", (1, 1, 10, 9), (2, 3), (3, 2), (2, 2), (0, 0, 0, 0), True, True),
    ("lp", (1, 2, 6, 5, 4), (2, 2, 2), (1, 2, 1), (1, 1, 2), (0, 1, 0, 1, 0, 0), False, False),
    ("lp", (1, 2, 7, 7), (3, 3), (2, 2), (2, 1), (1, 1, 1, 1), True, False),
]


def attrs(mode, kernel, strides, dilations, pads, ceil, include, **extra):
    return dict(mode=mode, kernel=kernel, strides=strides, dilations=dilations, pads=pads, ceil_mode=ceil,
                count_include_pad=include, **extra)


def onnx_reference(mode, x, kernel, strides, dilations, pads, ceil, include, p=2):
    kw = dict(kernel_shape=list(kernel), strides=list(strides), dilations=list(dilations), pads=list(pads),
              ceil_mode=int(ceil))
    if mode == "average":
        kw["count_include_pad"] = int(include)
    if mode == "lp":
        kw["p"] = p
    node = helper.make_node(ONNX_OP[mode], ["x"], ["y"], **kw)
    return ReferenceEvaluator(node, opsets={"": 22}).run(None, {"x": x})[0]


def pool_graph(case, **extra):
    mode, shape, *rest = case
    b = GraphBuilder("pool")
    outs = b.node("PoolND", [b.input("x", "float32", shape)], **attrs(mode, *rest, **extra))
    return b.output(*(outs if isinstance(outs, list) else [outs])).build()


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}{len(c[1]) - 2}d_{k}" for k, c in enumerate(CASES)])
def test_reference_matches_onnx_reference(case):
    x = np.random.default_rng(0).standard_normal(case[1]).astype(np.float32)
    g = pool_graph(case)
    got = run_graph(g, {"x": x})[g.outputs[0]]
    np.testing.assert_allclose(got, onnx_reference(case[0], x, *case[2:]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("column_major", [False, True])
def test_indices_match_onnxruntime(column_major):
    from float_binary_testing import ort_node

    x = np.random.default_rng(2).standard_normal((2, 2, 7, 6)).astype(np.float32)
    case = ("max", x.shape, (3, 2), (2, 2), (1, 1), (1, 0, 0, 1), False, False)
    g = pool_graph(case, with_indices=True, column_major_indices=column_major)
    got = run_graph(g, {"x": x})
    want = ort_node("MaxPool", {"x": x}, dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 0, 1],
                                              storage_order=int(column_major)), opset=12, n_out=2)
    np.testing.assert_array_equal(got[g.outputs[0]], want[0])
    np.testing.assert_array_equal(got[g.outputs[1]], want[1])


def test_c_matches_reference():
    rng = np.random.default_rng(3)
    graphs = [pool_graph(c) for c in CASES]
    graphs.append(pool_graph(("max", (2, 2, 5, 5, 4), (2, 3, 2), (2, 1, 2), (1, 1, 2), (0, 1, 0, 1, 1, 1),
                              True, False), with_indices=True))
    graphs.append(pool_graph(("max", (1, 3, 6, 5), (2, 2), (2, 2), (1, 1), (0, 0, 1, 0), False, False),
                             with_indices=True, column_major_indices=True))
    for g in graphs:
        feed = {"x": rng.standard_normal(g.values["x"].shape).astype(np.float32)}
        (out,) = run_c(g, [feed])
        for name, want in run_graph(g, feed).items():
            if want.dtype == np.int64:
                np.testing.assert_array_equal(out[name], want, err_msg=name)
            else:
                np.testing.assert_allclose(out[name], want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_bad_geometry_is_refused():
    b = GraphBuilder("t")
    x = b.input("x", "float32", (1, 1, 3, 3))
    with pytest.raises(KilnError, match="does not fit axis"):
        b.node("PoolND", [x], **attrs("max", (3, 3), (1, 1), (2, 2), (0, 0, 0, 0), False, False))
    with pytest.raises(KilnError, match="indices for max pooling only"):
        b.node("PoolND", [x], **attrs("average", (2, 2), (1, 1), (1, 1), (0, 0, 0, 0), False, False),
               with_indices=True)
