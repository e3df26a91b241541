"""If, Loop and Scan resolved at import time (codegen/frontends/onnx/ops_control.py): each model
against onnxruntime, through the IR interpreter and (one per construct) the generated C."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.frontends.onnx.subgraph import MAX_UNROLL
from codegen.ir import run_graph
from helpers import run_c

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "cf", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = om.ir_version_for(opset)
    return m


def body(nodes, inputs, outputs, inits=()) -> onnx.GraphProto:
    return helper.make_graph(nodes, "body", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits])


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def check(m: onnx.ModelProto, tmp_path, feeds: list[dict], c: bool = False):
    """Kiln's graph gives onnxruntime's outputs for every feed (and so does its C when `c`)."""
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    for feed in feeds:
        want = om.ort_outputs(m, feed)
        got = run_graph(g, feed)
        for name, exp in want.items():
            np.testing.assert_allclose(got[name], exp, rtol=1e-5, atol=1e-6, err_msg=name)
    if c:
        for feed, out in zip(feeds, run_c(g, feeds)):
            for name, exp in om.ort_outputs(m, feed).items():
                np.testing.assert_allclose(out[name], exp, rtol=1e-5, atol=1e-6, err_msg=name)
    return g


def if_model(cond_is_input: bool, else_shape=(3,)):
    then = body([helper.make_node("Mul", ["x", "two"], ["t"])], [], [vi("t", F, [3])],
                [("two", np.float32([2, 2, 2]))])
    other = body([helper.make_node("Neg", ["x"], ["e0"]), helper.make_node("Expand", ["e0", "shape"], ["e"])],
                 [], [vi("e", F, list(else_shape))], [("shape", np.array(else_shape, np.int64))])
    inputs = [vi("x", F, [3])] + ([vi("c", TensorProto.BOOL, [])] if cond_is_input else [])
    inits = [] if cond_is_input else [("c", np.array(False))]
    return model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
                 inputs, [vi("y", F, None)], inits)


def test_if_with_constant_condition_is_its_branch(tmp_path):
    g = check(if_model(False), tmp_path, [{"x": np.float32([1, -2, 3])}])
    assert "Where" not in [n.op for n in g.nodes] and "Neg" in [n.op for n in g.nodes]


def test_if_with_runtime_condition_selects_between_both_branches(tmp_path):
    x = np.float32([1, -2, 3])
    g = check(if_model(True), tmp_path, [{"x": x, "c": np.array(True)}, {"x": x, "c": np.array(False)}], c=True)
    assert "Where" in [n.op for n in g.nodes]


def test_if_with_runtime_condition_needs_one_shape(tmp_path):
    onnx.save(if_model(True, else_shape=(2, 3)), tmp_path / "m.onnx")
    with pytest.raises(KilnError, match="in one branch and .* in the other") as err:
        load(tmp_path / "m.onnx", {})
    assert err.value.node == "If_0"


def loop_model(trip: int | None, cond_body=None, opset=17):
    """y = sum over iterations of x * i (carried), scan output = the running value, and an If
    inside the body reading the outer tensor `bias` (renaming across nested subgraphs)."""
    inner_then = body([helper.make_node("Add", ["acc", "bias"], ["bumped"])], [], [vi("bumped", F, [2])])
    inner_else = body([helper.make_node("Identity", ["acc"], ["kept"])], [], [vi("kept", F, [2])])
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
             helper.make_node("Mul", ["x", "fi"], ["xi"]),
             helper.make_node("Add", ["s_in", "xi"], ["acc"]),
             helper.make_node("Greater", ["i", "one"], ["late"]),
             helper.make_node("If", ["late"], ["s_out"], then_branch=inner_then, else_branch=inner_else),
             helper.make_node("Identity", ["s_out"], ["scan"])]
    nodes += cond_body or [helper.make_node("Identity", ["c_in"], ["c_out"])]
    loop_body = body(nodes, [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("s_in", F, [2])],
                     [vi("c_out", TensorProto.BOOL, []), vi("s_out", F, [2]), vi("scan", F, [2])],
                     [("one", np.array(1, np.int64))])
    inits = [("bias", np.float32([0.5, -0.25])), ("s0", np.float32([0, 0])), ("cond", np.array(True))]
    if trip is not None:
        inits.append(("trip", np.array(trip, np.int64)))
    node = helper.make_node("Loop", ["trip" if trip is not None else "", "cond", "s0"], ["y", "ys"], body=loop_body)
    return model([helper.make_node("Relu", ["xr"], ["x"]), node], [vi("xr", F, [2])],
                 [vi("y", F, None), vi("ys", F, None)], inits, opset)


def test_loop_with_constant_trip_count_is_unrolled(tmp_path):
    g = check(loop_model(4), tmp_path, [{"xr": np.float32([1.5, 2.0])}], c=True)
    assert "Loop" not in [n.op for n in g.nodes]


def test_loop_stops_where_a_constant_condition_turns_false(tmp_path):
    stop = [helper.make_node("Constant", [], ["three"], value=numpy_helper.from_array(np.array(3, np.int64))),
            helper.make_node("Less", ["i", "three"], ["c_out"])]
    m = loop_model(None, stop)
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    feed = {"xr": np.float32([1.0, -1.0])}
    want = om.ort_outputs(m, feed)
    got = run_graph(g, feed)
    assert got["ys"].shape == want["ys"].shape == (4, 2)
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6)


def test_loop_refusals(tmp_path):
    onnx.save(loop_model(MAX_UNROLL + 1), tmp_path / "long.onnx")
    with pytest.raises(KilnError, match=f"more than {MAX_UNROLL} iterations"):
        load(tmp_path / "long.onnx", {})
    m = loop_model(2)
    m.graph.initializer.remove(next(t for t in m.graph.initializer if t.name == "trip"))
    m.graph.input.append(vi("trip", TensorProto.INT64, []))
    onnx.save(m, tmp_path / "runtime.onnx")
    with pytest.raises(KilnError, match="trip count .* must be a constant"):
        load(tmp_path / "runtime.onnx", {})


def scan_model(opset: int):
    """Two states (a running sum and a running product of rows) over x, read backwards along
    axis 1; the per-step sums stacked along output axis 1 (opset 9+)."""
    sb = body([helper.make_node("Add", ["sum_in", "row"], ["sum_out"]),
               helper.make_node("Mul", ["prod_in", "row"], ["prod_out"]),
               helper.make_node("Identity", ["sum_out"], ["step"])],
              [vi("sum_in", F, [2]), vi("prod_in", F, [2]), vi("row", F, [2])],
              [vi("sum_out", F, [2]), vi("prod_out", F, [2]), vi("step", F, [2])])
    inits = [("s0", np.float32([0, 1])), ("p0", np.float32([1, 1]))]
    if opset >= 9:
        node = helper.make_node("Scan", ["s0", "p0", "x"], ["s", "p", "steps"], body=sb, num_scan_inputs=1,
                                scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1])
        return model([node], [vi("x", F, [2, 3])], [vi("s", F, None), vi("p", F, None), vi("steps", F, None)],
                     inits, opset)
    inits = [(k, np.stack([v, v + 1])) for k, v in inits]  # a batch of 2
    node = helper.make_node("Scan", ["", "s0", "p0", "x"], ["s", "p", "steps"], body=sb, num_scan_inputs=1)
    return model([node], [vi("x", F, [2, 3, 2])], [vi("s", F, None), vi("p", F, None), vi("steps", F, None)],
                 inits, opset)


def test_scan_is_unrolled(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    check(scan_model(16), tmp_path, [{"x": x}], c=True)


def test_scan_opset8_runs_each_batch_entry(tmp_path):
    x = np.random.default_rng(1).standard_normal((2, 3, 2)).astype(np.float32)
    check(scan_model(8), tmp_path, [{"x": x}])


def test_unsupported_op_in_a_subgraph_is_named(tmp_path):
    then = body([helper.make_node("Frobnicate", ["x"], ["t"])], [], [vi("t", F, [3])])
    other = body([helper.make_node("Neg", ["x"], ["e"])], [], [vi("e", F, [3])])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], [vi("x", F, [3])],
              [vi("y", F, None)], [("c", np.array(True))])
    onnx.save(m, tmp_path / "m.onnx")
    with pytest.raises(KilnError, match="then_branch subgraph uses Frobnicate"):
        load(tmp_path / "m.onnx", {})


def test_loop_body_folds_old_opset_ops_of_the_iteration_count(tmp_path):
    """onnx's loop11 pattern: opset-11 Unsqueeze (axes as an attribute) of the iteration count
    folds per iteration (ONNX's reference needs the model's opset for it), then slices a constant."""
    nodes = [helper.make_node("Add", ["i", "one"], ["end"]),
             helper.make_node("Unsqueeze", ["i"], ["start1"], axes=[0]),
             helper.make_node("Unsqueeze", ["end"], ["end1"], axes=[0]),
             helper.make_node("Slice", ["table", "start1", "end1"], ["row"]),
             helper.make_node("Add", ["y_in", "row"], ["y_out"]),
             helper.make_node("Identity", ["y_out"], ["scan"]),
             helper.make_node("Identity", ["c_in"], ["c_out"])]
    loop_body = body(nodes, [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("y_in", F, [1])],
                     [vi("c_out", TensorProto.BOOL, []), vi("y_out", F, [1]), vi("scan", F, [1])],
                     [("one", np.array(1, np.int64)), ("table", np.float32([1, 2, 3, 4, 5]))])
    m = model([helper.make_node("Loop", ["trip", "cond", "y"], ["res_y", "res_scan"], body=loop_body)],
              [vi("y", F, [1])], [vi("res_y", F, None), vi("res_scan", F, None)],
              [("trip", np.array(5, np.int64)), ("cond", np.array(True))], opset=11)
    check(m, tmp_path, [{"y": np.float32([-2])}])


def test_inspect_lists_unsupported_ops_inside_branches_and_bodies(tmp_path):
    from codegen.frontends.onnx import scan

    then = body([helper.make_node("StringNormalizer", ["x"], ["t"], name="inner_bad")], [], [vi("t", F, [2])])
    other = body([helper.make_node("Relu", ["x"], ["e"], name="inner_ok")], [], [vi("e", F, [2])])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="branch")],
              [vi("c", TensorProto.BOOL, []), vi("x", F, [2])], [vi("y", F, [2])])
    onnx.save(m, tmp_path / "m.onnx")
    ops = {op.node: op for op in scan(tmp_path / "m.onnx")}
    assert set(ops) == {"branch", "branch/inner_bad", "branch/inner_ok"}
    assert not ops["branch/inner_bad"].supported and ops["branch/inner_ok"].supported
