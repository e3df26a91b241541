"""`--specialize NAME=v0,...`: a graph input that sizes tensors (Range's bounds, a window's
length, a Loop's trip count) is fixed at build time. The graph reads it as a constant; the C
API keeps it as an input, and the generated code refuses any other value."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from codegen.cli import main
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from helpers import run_c

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def save(tmp_path, nodes, inputs, outputs, opset=18):
    model = helper.make_model(helper.make_graph(nodes, "m", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, tmp_path / "m.onnx")
    return tmp_path / "m.onnx"


def range_plus_x(tmp_path, elem=F):
    """y = x + Range(start, limit, delta): the length of y comes from the bounds' values."""
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
             helper.make_node("Add", ["x", "r"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", elem, [1])] + \
        [helper.make_tensor_value_info(k, elem, []) for k in ("start", "limit", "delta")]
    return save(tmp_path, nodes, inputs, [helper.make_tensor_value_info("y", elem, None)])


BOUNDS = {"start": (1.0,), "limit": (5.0,), "delta": (0.5,)}


def feeds(x=2.0, start=1.0, limit=5.0, delta=0.5, dtype=np.float32):
    return {"x": np.array([x], dtype), "start": np.array(start, dtype), "limit": np.array(limit, dtype),
            "delta": np.array(delta, dtype)}


def test_range_bounds_given_at_build_time_fold_and_stay_inputs(tmp_path):
    g = load(range_plus_x(tmp_path), {}, BOUNDS)
    assert g.inputs == ["x", "start", "limit", "delta"]
    assert g.values["y"].shape == (8,)
    assert "Range" not in {n.op for n in g.nodes}  # computed at compile time
    got = run_c(g, [feeds()])[0]["y"]
    np.testing.assert_array_equal(got, 2.0 + np.arange(1.0, 5.0, 0.5, dtype=np.float32))


def test_another_value_of_a_specialised_input_is_refused_at_run_time(tmp_path):
    g = load(range_plus_x(tmp_path), {}, BOUNDS)
    with pytest.raises(RuntimeError, match="returned 30"):
        run_c(g, [feeds(limit=6.0)])


def test_without_specialize_the_error_says_how(tmp_path):
    with pytest.raises(KilnError, match="--specialize start="):
        load(range_plus_x(tmp_path), {})


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
def test_window_of_a_specialised_length_is_a_table(tmp_path, op):
    nodes = [helper.make_node(op, ["n"], ["w"], periodic=0),
             helper.make_node("Mul", ["x", "w"], ["y"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [6]),
                                  helper.make_tensor_value_info("n", I64, [])],
                [helper.make_tensor_value_info("y", F, None)])
    g = load(path, {}, {"n": np.array(6)})
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    want = ReferenceEvaluator(onnx.load(path)).run(None, {"x": x, "n": np.array(6, np.int64)})[0]
    np.testing.assert_allclose(run_c(g, [{"x": x, "n": np.array(6, np.int64)}])[0]["y"], want, rtol=1e-6)


def test_loop_with_a_specialised_trip_count_unrolls(tmp_path):
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"]),
                              helper.make_node("Mul", ["v", "two"], ["v_out"])], "body",
                             [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("v", F, [2])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("v_out", F, [2])],
                             [onnx.numpy_helper.from_array(np.float32(2), "two")])
    nodes = [helper.make_node("Loop", ["m", "", "x"], ["y"], body=body)]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("m", I64, []),
                                  helper.make_tensor_value_info("x", F, [2])],
                [helper.make_tensor_value_info("y", F, [2])])
    with pytest.raises(KilnError, match="--specialize m="):
        load(path, {})
    g = load(path, {}, {"m": np.array(3)})
    got = run_c(g, [{"m": np.array(3, np.int64), "x": np.float32([1, -2])}])[0]["y"]
    np.testing.assert_array_equal(got, np.float32([8, -16]))


def test_float16_bounds_are_checked_as_their_bit_patterns(tmp_path):
    g = load(range_plus_x(tmp_path, TensorProto.FLOAT16), {}, BOUNDS)
    got = run_c(g, [feeds(dtype=np.float16)])[0]["y"]
    np.testing.assert_array_equal(got, (np.float16(2) + np.arange(1, 5, 0.5, dtype=np.float16)))
    with pytest.raises(RuntimeError, match="returned 30"):
        run_c(g, [feeds(delta=0.25, dtype=np.float16)])


def test_bad_specialisations_are_one_line_errors(tmp_path):
    path = range_plus_x(tmp_path)
    with pytest.raises(KilnError, match="not a model input"):
        load(path, {}, {**BOUNDS, "nope": np.array(1.0)})
    with pytest.raises(KilnError, match="gives 2 value"):
        load(path, {}, {**BOUNDS, "start": np.array([1.0, 2.0])})
    ints = save(tmp_path, [helper.make_node("Range", ["a", "b", "c"], ["y"])],
                [helper.make_tensor_value_info(k, I64, []) for k in "abc"], [helper.make_tensor_value_info("y", I64, None)])
    with pytest.raises(KilnError, match="do not fit"):
        load(ints, {}, {"a": np.array(0.5), "b": np.array(4), "c": np.array(1)})


def test_cli_build_writes_the_value_into_header_and_manifest(tmp_path, capsys):
    path = range_plus_x(tmp_path)
    out = tmp_path / "gen"
    args = ["build", str(path), "--target", "host", "-o", str(out), "--name", "rng"]
    assert main(args) == 2
    assert "--specialize start=" in capsys.readouterr().err
    assert not out.exists()
    assert main(args + ["--specialize", "start=1", "--specialize", "limit=5", "--specialize", "delta=0.5"]) == 0
    header = (out / "rng.h").read_text()
    assert "#define RNG_INPUT_3_VALUE { 5.0e-01f }" in header and "RNG_ERR_INPUT_VALUE 30" in header
    manifest = json.loads((out / "rng.manifest.json").read_text())
    assert [io.get("specialized") for io in manifest["inputs"]] == [None, [1.0], [5.0], [0.5]]
    with pytest.raises(SystemExit) as info:  # argparse: usage line and exit 2
        main(["build", str(path), "--target", "host", "-o", str(tmp_path / "g2"), "--specialize", "start"])
    assert info.value.code == 2 and "NAME=v0,v1,..." in capsys.readouterr().err


def test_inspect_names_the_inputs_to_specialise(tmp_path):
    from codegen.frontends.onnx import scan

    nodes = [helper.make_node("HannWindow", ["n"], ["w"]), helper.make_node("Mul", ["x", "w"], ["y"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [8]), helper.make_tensor_value_info("n", I64, [])],
                [helper.make_tensor_value_info("y", F, [8])])
    window = scan(path)[0]
    assert not window.supported and "--specialize n=" in window.reason
    assert scan(path, ("n",))[0].supported


def test_verify_feeds_the_specialised_value(tmp_path, capsys):
    args = ["verify", str(range_plus_x(tmp_path)), "--target", "host", "--samples", "3"]
    assert main(args + ["--specialize", "start=1", "--specialize", "limit=5", "--specialize", "delta=0.5"]) == 0
    assert "kiln verify: ok" in capsys.readouterr().out
