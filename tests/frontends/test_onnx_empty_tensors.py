"""Tensors with no elements in ONNX models. Such a tensor holds no data, so Kiln knows its value
at compile time (an empty constant): a reduction over an empty axis folds to its identity, empty
inputs drop out of a Concat, a Slice past the end is an empty constant, and empty graph inputs
and outputs stay in the C API, never read and never written."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_models as om
from codegen.cli import _input_shape
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph
from codegen.verify.host import run_generated
from helpers import build_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/ lives in the checkout, not the package
from bench.onnx_conformance import collect_cases, run_case  # noqa: E402

REDUCTIONS = ["ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceLogSum",
              "ReduceLogSumExp", "ReduceSumSquare"]


def model(nodes, inputs, outputs, inits=(), opset=18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "empty", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = om.ir_version_for(opset)
    return m


def compile_and_run(tmp_path, m, feeds, shapes=None, sanitize=False):
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    g = load(path, shapes or {})
    res = build_graph(g)
    return g, res, run_generated(res.files, "t", [feeds], sanitize=sanitize)[0]


def test_reductions_over_an_empty_axis_are_their_identities(tmp_path):
    nodes = [helper.make_node(op, ["data", "axes"], [op.lower()], keepdims=1) for op in REDUCTIONS]
    m = model(nodes, [("x", [2, 4]), ("data", [2, 0, 4])], [(op.lower(), [2, 1, 4]) for op in REDUCTIONS],
              [("axes", np.array([1], np.int64))])
    m.graph.node.append(helper.make_node("Relu", ["x"], ["y"]))  # one output computed at run time
    m.graph.node.append(helper.make_node("Add", ["reducesum", "x"], ["t"]))  # a folded output read at run time
    m.graph.output.extend([helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4]),
                           helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 2, 4])])
    feeds = {"x": np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4), "data": np.zeros((2, 0, 4), np.float32)}
    g, res, got = compile_and_run(tmp_path, m, feeds)
    expected = om.ort_outputs(m, feeds)
    assert expected["reducemax"][0, 0, 0] == -np.inf and expected["reduceprod"][0, 0, 0] == 1.0
    for name, want in expected.items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)
    assert not any("data" in n.inputs for n in g.nodes)  # nothing reads it: the sums are constants
    assert res.manifest["inputs"][1]["shape"] == [2, 0, 4]
    assert [o["name"] for o in res.manifest["outputs"]] == [vi.name for vi in m.graph.output]
    assert "(void)in_data_1;" in res.files["t.c"]


def test_concat_drops_empty_inputs(tmp_path):
    m = model([helper.make_node("Concat", ["e", "x", "c"], ["cat"], axis=0), helper.make_node("Neg", ["cat"], ["y"])],
              [("x", [2, 3]), ("e", ["n", 3])], [("y", [2, 3])], [("c", np.zeros((0, 3), np.float32))])
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "e": np.zeros((0, 3), np.float32)}
    g, res, got = compile_and_run(tmp_path, m, feeds, {"e": (0, 3)}, sanitize=True)
    np.testing.assert_array_equal(got["y"], om.ort_outputs(m, feeds)["y"])
    assert [n.op for n in g.nodes] == ["Neg"]
    assert res.manifest["inputs"][1]["shape"] == [0, 3]


def test_slice_past_the_end_is_an_empty_output(tmp_path):
    m = model([helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["z"]), helper.make_node("Neg", ["x"], ["y"])],
              [("x", [4, 3])], [("z", [0, 3]), ("y", [4, 3])],
              [("starts", np.array([10], np.int64)), ("ends", np.array([20], np.int64)), ("axes", np.array([0], np.int64))])
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(4, 3)}
    g, res, got = compile_and_run(tmp_path, m, feeds, sanitize=True)
    assert got["z"].shape == (0, 3) and res.manifest["outputs"][0]["shape"] == [0, 3]
    np.testing.assert_array_equal(got["y"], -feeds["x"])
    assert "float *out_z_1" in res.files["t.h"] and "(void)out_z_1;" in res.files["t.c"]
    assert [n.op for n in g.nodes] == ["Neg"]  # nothing computes z
    assert run_graph(g, feeds)["z"].shape == (0, 3)


@pytest.mark.parametrize("op,params", [
    ("Pad", [("pads", [0, 0, 0, -3])]),  # cropped to nothing
    ("TopK", [("k", [0])]),  # two empty outputs, values and int64 indices
    ("Expand", [("shape", [0, 2, 3])]),
])
def test_runtime_nodes_with_empty_results_compute_nothing(tmp_path, op, params):
    outs = ["z", "zi"] if op == "TopK" else ["z"]
    m = model([helper.make_node(op, ["x"] + [k for k, _ in params], outs), helper.make_node("Neg", ["x"], ["y"])],
              [("x", [2, 3])], [("z", None), ("y", [2, 3])], [(k, np.array(v, np.int64)) for k, v in params])
    if op == "TopK":
        m.graph.output.append(helper.make_tensor_value_info("zi", TensorProto.INT64, None))
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    assert [n.op for n in g.nodes] == ["Neg"]
    expected = om.ort_outputs(m, {"x": np.ones((2, 3), np.float32)})
    for out in outs:
        assert g.values[out].is_const and g.values[out].shape == expected[out].shape
        assert g.values[out].dtype == ("int64" if out == "zi" else "float32")


def test_zero_dimensions_are_real(tmp_path):
    declared = model([helper.make_node("Relu", ["x"], ["y"])], [("x", [0, 5])], [("y", [0, 5])])
    onnx.save(declared, tmp_path / "d.onnx")
    g = load(tmp_path / "d.onnx", {})
    assert g.values["x"].shape == (0, 5) and g.values["y"].shape == (0, 5) and not g.nodes
    dynamic = model([helper.make_node("Relu", ["x"], ["y"])], [("x", ["n", 5])], [("y", ["n", 5])])
    onnx.save(dynamic, tmp_path / "n.onnx")
    assert load(tmp_path / "n.onnx", {"x": (0, 5)}).values["y"].shape == (0, 5)
    assert _input_shape("data=2,0,4") == ("data", (2, 0, 4))
    with pytest.raises(Exception, match="at least 0"):
        _input_shape("data=2,-1,4")


@pytest.mark.parametrize("nodes,inputs,outputs,words", [
    # an empty graph input that is also a graph output: nothing to compute
    ([], [("x", [0, 3])], [("x", [0, 3])], ["also a graph input", "'x'"]),
    # the mean of nothing is NaN, which Kiln refuses as a constant
    ([helper.make_node("ReduceMean", ["x", "axes"], ["y"])], [("x", [2, 0])], [("y", [2, 1])], ["NaN"]),
])
def test_what_stays_unsupported_is_a_clear_error(tmp_path, nodes, inputs, outputs, words):
    m = model(nodes, inputs, outputs, [("axes", np.array([1], np.int64))] if nodes else [])
    onnx.save(m, tmp_path / "m.onnx")
    with pytest.raises(KilnError) as info:
        load(tmp_path / "m.onnx", {})
    assert all(w in str(info.value) for w in words) and "\n" not in str(info.value)


# a few of the ONNX backend cases (bench/onnx_conformance.py runs them all), from onnx test
# modules that generate quickly
CASES = ["test_slice_start_out_of_bounds", "test_causal_conv_with_state_kernel_size_one",
         "test_causal_conv_with_state_kernel_size_one_expanded", "test_split_zero_size_splits_opset18",
         "test_triu_zero"]


def test_onnx_backend_cases_with_empty_tensors_pass():
    cases = {c.name: c for c in collect_cases(CASES)}
    for name in CASES:
        result = run_case(cases[name])
        assert result.status == "pass", f"{name}: {result.status}: {result.reason}"


def test_empty_input_and_output_on_cortex_m4_in_qemu(tmp_path, capsys):
    """The firmware harness has no zero-length arrays either: kiln verify in QEMU with an empty
    input (Concat drops it) and an empty output (Slice past the end), -inf compared as equal."""
    from codegen.cli import main

    m = model([helper.make_node("Concat", ["x", "e"], ["y"], axis=0),
               helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["z"]),
               helper.make_node("ReduceMax", ["e", "axes"], ["low"], keepdims=1)],
              [("x", [2, 3]), ("e", [0, 3])], [("y", [2, 3]), ("z", [0, 3]), ("low", [1, 3])],
              [("starts", np.array([5], np.int64)), ("ends", np.array([9], np.int64)), ("axes", np.array([0], np.int64))])
    onnx.save(m, tmp_path / "m.onnx")
    assert main(["verify", str(tmp_path / "m.onnx"), "--target", "cortex-m4", "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "z: float32, max abs error 0, relative 0, 0 of 0 elements" in out and "kiln verify: ok" in out
