"""Transpose: float32 against onnxruntime, int8 against TFLite Micro's TRANSPOSE, the
compile-time axis merging, and the generated C against the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.lower import lower_graph
from codegen.targets import load_target
from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.ops.transpose import transpose_plan
from helpers import build_graph
from op_testing import (assert_c_equals_reference, finish, graph_of_cases, random_feeds,
                        run_onnx_node)

CASES = [  # shape, perm
    ((1, 8, 4, 4), (0, 2, 3, 1)),      # NCHW -> NHWC
    ((1, 4, 4, 8), (0, 3, 1, 2)),      # NHWC -> NCHW
    ((2, 3, 4), ()),                   # ONNX default: reversed axes
    ((2, 3, 1, 4, 5), (4, 2, 0, 3, 1)),
    ((2, 3, 2, 3, 2, 3), (5, 3, 1, 4, 2, 0)),  # six axes, nothing merges
    ((3, 1, 5), (1, 0, 2)),            # moves no data: a copy
]


Q = Quant.of(0.05, 7)


def case(dtype: str, shape, perm, quant: Quant | None = None, out_quant: Quant | None = None):
    def build(b: GraphBuilder, prefix: str) -> str:
        x = b.input(f"{prefix}x", dtype, shape, quant)
        return b.node("Transpose", [x], perm=perm, quant=out_quant or quant)
    return build


@pytest.mark.parametrize("shape,perm", CASES)
def test_float_matches_onnxruntime(shape, perm):
    g = graph_of_cases("transpose", [case("float32", shape, perm)])
    for feed in random_feeds(g, 2, len(shape)):
        want = run_onnx_node("Transpose", {"x": feed["c0_x"]}, {"perm": list(perm)} if perm else {})
        np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], want)


@pytest.mark.parametrize("shape,perm", [c for c in CASES if c[1] and len(c[0]) <= 5])  # TFLM: <= 5-D
def test_int8_matches_tflm(shape, perm):
    from tflite_models import TensorSpec, const, run_tflm, single_op_model

    g = graph_of_cases("transpose", [case("int8", shape, perm, Q)])
    model = single_op_model("TRANSPOSE", [TensorSpec(shape, "int8", Q.s, Q.zp), const(perm, "int32")],
                            [TensorSpec(g.values[g.outputs[0]].shape, "int8", Q.s, Q.zp)])
    for feed in random_feeds(g, 2, 20 + len(shape)):
        np.testing.assert_array_equal(run_graph(g, feed)[g.outputs[0]], run_tflm(model, feed["c0_x"])[0])


def test_generated_c_equals_reference():
    cases = [case("float32", s, p) for s, p in CASES] + [case("int8", s, p, Q) for s, p in CASES]
    cases.append(case("int16", (2, 3, 4), (2, 0, 1)))
    g = graph_of_cases("transpose", cases)
    feeds = random_feeds(g, 2, 4)
    got = assert_c_equals_reference(g, feeds)
    np.testing.assert_array_equal(got[0][g.outputs[-1]], feeds[0][f"c{len(cases) - 1}_x"].transpose(2, 0, 1))


def test_plan_merges_adjacent_axes_and_drops_unit_axes():
    # NCHW -> NHWC of float: H and W stay adjacent (one loop of 16), C is strided.
    assert transpose_plan((1, 8, 4, 4), (0, 2, 3, 1), 4) == ([16, 8], [4, 64], 4)
    # The last input axis stays last: each step copies a contiguous run of 5 int8.
    assert transpose_plan((2, 3, 5), (1, 0, 2), 1) == ([3, 2], [5, 15], 5)
    # A size-1 axis between two adjacent axes does not break the run.
    assert transpose_plan((2, 1, 3, 4), (2, 1, 3, 0), 1) == ([12, 2], [1, 12], 1)
    # Nothing moves: no loop, one chunk of all the bytes.
    assert transpose_plan((3, 1, 5), (1, 0, 2), 4) == ([], [], 60)


def test_identity_is_a_view():
    b = GraphBuilder("t")
    x = b.input("x", "float32", (2, 3))
    y = b.node("Add", [x, x])
    t = b.node("Transpose", [y], perm=(0, 1))
    g = b.output(b.node("Add", [t, t])).build()
    assert [c.kernel for c in build_graph(g).lowered.calls] == ["add_f32", "add_f32"]  # the pipeline drops it
    lowered = lower_graph(g, load_target("host"))  # lowered as it is: a view of its input
    assert [c.kernel for c in lowered.calls] == ["add_f32", "add_f32"]
    assert lowered.root(t) == y


def one(*args):
    b = GraphBuilder("transpose")
    return finish(b, case(*args)(b, ""))


def test_too_many_independent_axes_are_refused():
    g = one("int8", (2,) * 7, (), Quant.of(0.1, 0))
    with pytest.raises(KilnError, match="at most 6") as err:
        build_graph(g)
    assert err.value.node == g.nodes[0].name


def test_int8_requantizing_is_refused():
    g = one("int8", (2, 3), (1, 0), Quant.of(0.1, 0), Quant.of(0.1, 1))
    with pytest.raises(KilnError, match="quantization"):
        build_graph(g)


def test_bad_perm_is_refused():
    b = GraphBuilder("t")
    x = b.input("x", "float32", (2, 3))
    with pytest.raises(KilnError, match="permutation"):
        b.node("Transpose", [x], perm=(0, 0))
