"""The `kiln` command end to end: outputs, errors, atomic writes, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

import onnx_models as om

KILN = [sys.executable, "-m", "codegen"]


def kiln(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*KILN, *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def unsupported_onnx(tmp_path_factory) -> Path:
    """A model with two unsupported operators among supported ones."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu_ok"),
             helper.make_node("StringNormalizer", ["a"], ["b"], name="first_bad"),
             helper.make_node("Relu", ["b"], ["c"], name="relu_ok2"),
             helper.make_node("ImageDecoder", ["c"], ["y"], name="second_bad")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path_factory.mktemp("m") / "unsupported.onnx"
    onnx.save(model, path)
    return path


def test_every_subcommand_has_help():
    for cmd in ("build", "run", "verify", "inspect"):
        proc = kiln(cmd, "--help")
        assert proc.returncode == 0 and "usage: kiln " + cmd in proc.stdout


def test_build_writes_the_contracted_files(models_dir, tmp_path):
    out = tmp_path / "gen"
    proc = kiln("build", models_dir / "kws_ref_model.tflite", "--target", "host", "-o", out, "--name", "kws")
    assert proc.returncode == 0, proc.stderr
    names = {p.name for p in out.iterdir()}
    assert {"kws.h", "kws.c", "kws_weights.c", "kws.manifest.json", "kws.memory.md", "kiln.mk"} <= names
    m = json.loads((out / "kws.manifest.json").read_text())
    for key in ("arena_bytes", "arena_lower_bound_bytes", "planner_status", "weights_bytes", "ops", "kernels",
                "inputs", "outputs", "fusion_groups", "target", "kiln_version", "model_sha256"):
        assert key in m
    assert m["inputs"][0]["dtype"] == "int8" and m["inputs"][0]["shape"] == [1, 49, 10, 1]
    # in-place reuse can go below the no-aliasing bound, never below the in-place one
    assert m["arena_inplace_bound_bytes"] <= m["arena_bytes"] < m["arena_lower_bound_bytes"]
    header = (out / "kws.h").read_text()
    assert "#define KWS_ARENA_SIZE" in header and "int kws_run(" in header
    assert m["model_sha256"] in header


def test_build_says_an_open_batch_was_compiled_as_one(tmp_path):
    """An ONNX input with a symbolic batch is compiled for one sample: the manifest lists the
    open dimension and the build says so in one note; with --input-shape, neither."""
    model = tmp_path / "mlp.onnx"
    onnx.save(om.mlp(batch="N"), model)
    proc = kiln("build", model, "--target", "host", "-o", tmp_path / "one", "--name", "mlp")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == ("kiln: note: input 'x': dimension 0 is open in the model, compiled as 1; "
                                   "--input-shape x=d0,16 for another size")
    entry = json.loads((tmp_path / "one" / "mlp.manifest.json").read_text())["inputs"][0]
    assert (entry["shape"], entry["open_dims"]) == ([1, 16], [0])
    proc = kiln("build", model, "--target", "host", "-o", tmp_path / "four", "--name", "mlp", "--input-shape", "x=4,16")
    assert proc.returncode == 0 and "note" not in proc.stderr, proc.stderr
    entry = json.loads((tmp_path / "four" / "mlp.manifest.json").read_text())["inputs"][0]
    assert entry["shape"] == [4, 16] and "open_dims" not in entry


def test_build_is_byte_identical_across_runs_and_hash_seeds(models_dir, tmp_path):
    outs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"gen{seed}"
        proc = kiln("build", models_dir / "pretrainedResnet_quant.tflite", "--target", "host", "-o", out,
                    env={"PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        outs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outs[0] == outs[1]
    assert not any(str(tmp_path).encode() in data for data in outs[0].values())


def test_inspect_lists_every_unsupported_op_with_its_node(unsupported_onnx):
    proc = kiln("inspect", unsupported_onnx)
    assert proc.returncode == 0, proc.stderr
    assert "StringNormalizer (node 'first_bad')" in proc.stdout
    assert "ImageDecoder (node 'second_bad')" in proc.stdout
    assert "unsupported: 2 node(s)" in proc.stdout


def test_build_of_unsupported_model_fails_cleanly_and_writes_nothing(unsupported_onnx, tmp_path):
    out = tmp_path / "gen"
    proc = kiln("build", unsupported_onnx, "--target", "host", "-o", out)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "first_bad" in lines[0] and "second_bad" in lines[0] and "unsupported.onnx" in lines[0]
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_failed_build_leaves_previous_output_untouched(models_dir, unsupported_onnx, tmp_path):
    out = tmp_path / "gen"
    assert kiln("build", models_dir / "ad01_int8.tflite", "--target", "host", "-o", out).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert kiln("build", unsupported_onnx, "--target", "host", "-o", out).returncode == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_bad_input_is_one_line_without_traceback(tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07this is not a model" * 10)
    for args in (["build", garbage, "--target", "host", "-o", tmp_path / "o"],
                 ["build", tmp_path / "missing.tflite", "--target", "host", "-o", tmp_path / "o"],
                 ["inspect", garbage],
                 ["build", garbage, "--target", "no-such-target", "-o", tmp_path / "o"]):
        proc = kiln(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_run_writes_outputs_as_npy(models_dir, tmp_path):
    import numpy as np

    x = np.random.default_rng(1).integers(-128, 128, (1, 640), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    proc = kiln("run", models_dir / "ad01_int8.tflite", "--target", "host", "--input", tmp_path / "x.npy",
                "--output-dir", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    (npy,) = list((tmp_path / "out").glob("*.npy"))
    from codegen.verify.reference import _tflite_io_names, run_tflite_micro

    model = models_dir / "ad01_int8.tflite"
    (in_name,), (out_name,) = _tflite_io_names(model)
    (ref,) = run_tflite_micro(model, [{in_name: x}])
    np.testing.assert_array_equal(np.load(npy), ref[out_name])


def test_verify_handles_an_output_that_passes_an_input_through(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], outs)
    path = tmp_path / "passthrough.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    proc = kiln("verify", path, "--target", "host", "--samples", "3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("-> ok") == 2


def test_verify_reports_a_quantized_output_in_lsb(tmp_path):
    """A QDQ output is judged in steps of its scale: the distances are printed, and
    --tolerance-lsb 0 turns a one-step difference into a mismatch (exit 1)."""
    import numpy as np
    from onnx import numpy_helper

    c = lambda name, v, dt: numpy_helper.from_array(np.array(v, dt), name)  # noqa: E731
    inits = [c("s", 0.02, np.float32), c("z", 0, np.int8), c("ys", 0.015, np.float32), c("yz", -20, np.int8)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
             helper.make_node("Sigmoid", ["xd"], ["sg"]),
             helper.make_node("Mul", ["xd", "sg"], ["sw"]),
             helper.make_node("QuantizeLinear", ["sw", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], inits)
    path = tmp_path / "qdq.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    proc = kiln("verify", path, "--target", "host", "--samples", "5")
    assert "LSB (step 0.015, tolerance 1)" in proc.stdout, proc.stdout + proc.stderr
    strict = kiln("verify", path, "--target", "host", "--samples", "5", "--tolerance-lsb", "0")
    if "all elements exact" not in proc.stdout:
        assert strict.returncode == 1 and "MISMATCH" in strict.stdout
    bad = kiln("verify", path, "--target", "host", "--tolerance-lsb", "-1")
    assert bad.returncode == 2 and "--tolerance-lsb must be at least 0" in bad.stderr


def test_build_summary_arena_bounds_and_the_arena_options(models_dir, tmp_path):
    """The summary puts the arena beside both lower bounds and the RAM with the I/O; --arena
    caller and --io-in-arena change the API, not the numbers of a plain build."""
    model = models_dir / "kws_ref_model.tflite"
    proc = kiln("build", model, "--target", "cortex-m4", "-o", tmp_path / "a", "--name", "kws")
    assert proc.returncode == 0, proc.stderr
    m = json.loads((tmp_path / "a" / "kws.manifest.json").read_text())
    assert (f"arena {m['arena_bytes']} B (lower bounds {m['arena_lower_bound_bytes']} B without in-place reuse, "
            f"{m['arena_inplace_bound_bytes']} B with it;") in proc.stdout
    assert f"RAM {m['arena_bytes'] + 502} B with the inputs and outputs (502 B)" in proc.stdout
    proc = kiln("build", model, "--target", "cortex-m4", "-o", tmp_path / "b", "--name", "kws",
                "--arena", "caller", "--io-in-arena")
    assert proc.returncode == 0, proc.stderr and "inputs and outputs inside it" in proc.stdout
    header = (tmp_path / "b" / "kws.h").read_text()
    assert "int kws_init(uint8_t *arena, size_t size);" in header and "int8_t *kws_input_0(void);" in header
    m2 = json.loads((tmp_path / "b" / "kws.manifest.json").read_text())
    assert m2["arena_placement"] == "caller" and m2["ram"]["io_outside_arena"]["total_bytes"] == m["ram"]["total_bytes"]
    proc = kiln("build", model, "--target", "cortex-m4", "-o", tmp_path / "c", "--arena", "caller",
                "--debug-canaries")
    assert proc.returncode == 2 and "--debug-canaries guards the static arena" in proc.stderr


def test_ram_limit_says_what_it_took_or_the_least_it_reaches(models_dir, tmp_path):
    model = models_dir / "kws_ref_model.tflite"
    proc = kiln("build", model, "--target", "cortex-m4", "-o", tmp_path / "a", "--ram-limit", "9K")
    assert proc.returncode == 0, proc.stderr
    took = [ln for ln in proc.stdout.splitlines() if ln.startswith("kiln: --ram-limit: took ")]
    assert took and "reference kernels for depthwise_conv2d_s8" in took[0]
    assert "of 9216 B" in took[0] and "% cycles" in took[0]
    proc = kiln("build", model, "--target", "cortex-m4", "-o", tmp_path / "b", "--ram-limit", "4K")
    assert proc.returncode == 2 and not (tmp_path / "b").exists()
    (line,) = proc.stderr.strip().splitlines()
    assert "budget is 4096 B (--ram-limit); the least Kiln reaches is " in line


def test_run_takes_the_arena_options_and_board_projects_refuse_them(tmp_path):
    import numpy as np

    model = Path(__file__).resolve().parent / "golden" / "models" / "tiny_int8.tflite"
    m = json.loads((Path(__file__).resolve().parent / "golden" / "tiny_int8" / "tiny_int8.manifest.json").read_text())
    x = tmp_path / "x.npy"
    np.save(x, (np.arange(np.prod(m["inputs"][0]["shape"])) % 11 - 5).astype(np.int8).reshape(m["inputs"][0]["shape"]))
    outs = []
    for opts in ((), ("--io-in-arena", "--arena", "caller")):
        out = tmp_path / f"out{len(outs)}"
        proc = kiln("run", model, "--target", "host", "--input", x, "--output-dir", out, *opts)
        assert proc.returncode == 0, proc.stderr
        outs.append(np.load(next(out.glob("*.npy"))))
    np.testing.assert_array_equal(outs[0], outs[1])
    proc = kiln("build", model, "--board", "mps2-an386", "-o", tmp_path / "fw", "--io-in-arena")
    assert proc.returncode == 2 and "a --board project's main passes its own" in proc.stderr
    assert not (tmp_path / "fw").exists()
