"""Broken models are refused at import, with one line per finding (issue 17): the full ONNX
checker (and `--no-check-model` for models a user must compile anyway), TFLite operators whose
tensor types or quantization the operator does not accept, and external data whose sizes do not
fit the tensor or the file — checked before anything is read."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from mutations import tflite_pack, tflite_unpack
from onnx import TensorProto, helper

import onnx_models as om
import codegen.verify.reference as reference
from codegen import cli
from codegen.errors import KilnError
from codegen.frontends import load_model

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models"


def kiln(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codegen", *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kw)


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def qdq_model() -> onnx.ModelProto:
    """x -> QuantizeLinear -> DequantizeLinear -> Mul(w) -> GlobalAveragePool -> y, as exporters write it."""
    b = om.ModelBuilder("qdq", 13)
    b.input("x", (1, 4, 6, 6))
    b.init("scale", np.array(0.05, np.float32))
    b.init("zp", np.array(0, np.int8))
    b.init("w", np.full((1, 4, 1, 1), 0.5, np.float32))
    b.nodes += [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"], name="quant"),
                helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["dq"], name="dequant"),
                helper.make_node("Mul", ["dq", "w"], ["m"], name="mul"),
                helper.make_node("GlobalAveragePool", ["m"], ["y"], name="pool")]
    return b.output("y", (1, 4, 1, 1)).model()


def retype_scale_to_uint4(m):
    scale = next(t for t in m.graph.initializer if t.name == "scale")
    scale.data_type = TensorProto.UINT4  # still holding the float's 4 bytes


def negative_dim(m):
    next(t for t in m.graph.initializer if t.name == "w").dims[0] = -1


def group_on_mul(m):
    next(n for n in m.graph.node if n.op_type == "Mul").attribute.append(helper.make_attribute("group", 2))


def huge_opset(m):
    m.opset_import[0].version = 2 ** 40


def pool_with_two_inputs(m):
    next(n for n in m.graph.node if n.op_type == "GlobalAveragePool").input.append("m")


CHECKER_CASES = {"uint4_scale": retype_scale_to_uint4, "negative_dim": negative_dim, "group_on_mul": group_on_mul,
                 "opset_2_40": huge_opset, "pool_two_inputs": pool_with_two_inputs}


@pytest.mark.parametrize("case", sorted(CHECKER_CASES))
def test_the_issues_checker_invalid_onnx_models_are_refused(case, tmp_path):
    """Before: each of these built with exit 0."""
    m = qdq_model()
    CHECKER_CASES[case](m)
    path = tmp_path / f"{case}.onnx"
    onnx.save(m, path)
    with pytest.raises(KilnError) as info:
        load_model(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(path)) and "the ONNX checker rejects the model" in msg
    assert "--no-check-model" in msg


def test_the_valid_model_builds_and_no_check_model_skips_the_checker(tmp_path):
    path = tmp_path / "qdq.onnx"
    onnx.save(qdq_model(), path)
    assert kiln("build", path, "--target", "host", "-o", tmp_path / "ok").returncode == 0
    m = qdq_model()
    group_on_mul(m)  # harmless to Kiln: compiles when the user insists
    onnx.save(m, path)
    line = one_line(kiln("build", path, "--target", "host", "-o", tmp_path / "refused"))
    assert "node 'mul'" in line and "group" in line
    proc = kiln("build", path, "--target", "host", "-o", tmp_path / "forced", "--no-check-model")
    assert proc.returncode == 0, proc.stderr


def conv_filter_retyped(to: str) -> bytes:
    schema_types = {"BOOL": 6, "UINT8": 3, "INT16": 7, "FLOAT32": 0}
    m = tflite_unpack((GOLDEN / "tiny_int8.tflite").read_bytes())
    sg = m.subgraphs[0]
    conv = sg.operators[0]  # CONV_2D: input, filter, bias
    sg.tensors[int(conv.inputs[1])].type = schema_types[to]
    return tflite_pack(m)


@pytest.mark.parametrize("to", ["BOOL", "UINT8"])  # same item size: every length still fits
def test_a_conv_filter_retyped_from_int8_is_refused(to, tmp_path):
    """The issue's case: one byte turning the CONV_2D filter from INT8 into BOOL built, and the
    code returned finite arbitrary values where LiteRT returns NaN."""
    path = tmp_path / "retyped.tflite"
    path.write_bytes(conv_filter_retyped(to))
    line = one_line(kiln("build", path, "--target", "host", "-o", tmp_path / "gen"))
    assert "CONV_2D: filter" in line and f"is {to}, but CONV_2D with a INT8 input takes INT8 or INT4" in line
    assert not (tmp_path / "gen").exists()


def test_every_shipped_tflite_model_passes_the_operator_checks(models_dir):
    from codegen.frontends.tflite import load

    for path in [GOLDEN / "tiny_int8.tflite", *sorted(models_dir.glob("*.tflite"))]:
        load(path, {})  # no KilnError: the rules accept what real converters write


def sparse_external_data_model(tmp_path: Path, size: int) -> Path:
    """The issue's model: initializers in a data file without `length`, the file a sparse 2 GiB."""
    folder = tmp_path / "m"
    folder.mkdir(parents=True)
    path = folder / "cnn.onnx"
    onnx.save_model(om.cnn(), path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="cnn.data", size_threshold=0)
    m = onnx.load(str(path), load_external_data=False)
    for t in m.graph.initializer:
        for e in list(t.external_data):
            if e.key == "length":
                t.external_data.remove(e)
    onnx.save_model(m, path)
    with open(folder / "cnn.data", "r+b") as f:
        f.truncate(size)
    return path


SPARSE_PROBE = """
import resource, sys, time
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.RLIM_INFINITY))  # 1 GiB: far below 2 GiB
from codegen.frontends import load_model
from codegen.errors import KilnError
start = time.perf_counter()
try:
    load_model(Path(sys.argv[1]))
    print("built")
except KilnError as err:
    print(f"{time.perf_counter() - start:.2f}", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, str(err))
"""


def test_a_2gib_sparse_external_data_file_is_judged_before_reading(tmp_path):
    """Before: 6.3 GB of memory and 44 s, then MemoryError. Now every tensor reads exactly its
    own bytes, so the model builds when the data it needs is in place; a 2 GiB data file that
    holds less than a tensor needs fails at once, under a 1 GiB address-space limit."""
    path = sparse_external_data_model(tmp_path, 2 * 2 ** 30)
    proc = subprocess.run([sys.executable, "-c", SPARSE_PROBE, str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("built",) or "external data" in proc.stdout, proc.stdout
    path = sparse_external_data_model(tmp_path / "short", 10)
    out = subprocess.run([sys.executable, "-c", SPARSE_PROBE, str(path)], capture_output=True, text=True,
                         timeout=120).stdout.split(" ", 2)
    seconds, rss_kib, message = float(out[0]), int(out[1]), out[2]
    assert seconds < 5 and rss_kib < 512 * 1024
    assert "external data at bytes" in message and "which has only 10" in message


@pytest.mark.parametrize("entry,value,words", [
    ("length", "999999999999", "external data length 999999999999 bytes, but"),
    ("offset", "-4", "is negative"),
    ("offset", "x", "is not a number"),
    ("location", "../outside.bin", "lies outside the model's folder"),
    ("location", "/etc/passwd", "lies outside the model's folder"),
    ("location", ".", "is not a regular file"),
])
def test_external_data_fields_are_checked_against_the_tensor_and_the_file(tmp_path, entry, value, words):
    folder = tmp_path / "m"
    folder.mkdir()
    path = folder / "cnn.onnx"
    onnx.save_model(om.cnn(), path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="cnn.data", size_threshold=0)
    m = onnx.load(str(path), load_external_data=False)
    t = m.graph.initializer[0]
    entries = {e.key: e for e in t.external_data}
    if entry in entries:
        entries[entry].value = value
    else:
        t.external_data.add(key=entry, value=value)
    onnx.save_model(m, path)
    with pytest.raises(KilnError) as info:
        load_model(path)
    assert words in str(info.value) and t.name in str(info.value)


def test_kiln_verify_names_a_reference_runtime_that_refuses_the_model(tmp_path):
    """Before: an internal error (exit 70) whenever the reference runtime refused a model that
    `kiln build` accepted; here onnxruntime is made to refuse the model as it does such ones."""
    m = qdq_model()
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    def refuse(model, samples, *level):  # level: the optimisation level --numerics asks for
        raise RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model.\nmore")

    original = reference.run_onnxruntime
    reference.run_onnxruntime = refuse
    try:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = cli.main(["verify", str(path), "--target", "host", "--samples", "1"])
    finally:
        reference.run_onnxruntime = original
    lines = err.getvalue().splitlines()
    assert rc == 2 and len(lines) == 1, lines
    assert "the reference runtime onnxruntime refuses the model" in lines[0] and "INVALID_GRAPH" in lines[0]
    assert str(path) in lines[0]


@pytest.mark.parametrize("args,words", [
    (["build", "m.onnx", "--target", "host", "-o", "g", "--ram-limit", "abc"], "--ram-limit"),
    (["build", "m.onnx", "--target", "host", "-o", "g", "--opt-level", "O9"], "--opt-level"),
    (["build", "m.onnx", "--target", "host"], "-o/--output"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
])
def test_usage_errors_are_one_line_with_a_hint(args, words):
    """Before: a ten-line usage block."""
    line = one_line(kiln(*args))
    assert line.startswith("kiln: error:") and words in line and "--help" in line


@pytest.mark.parametrize("content,words", [
    (Path("/etc/passwd").read_bytes() if Path("/etc/passwd").exists() else b"root:x:0:0\n", "a text file"),
    (b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.", "a Python pickle, which Kiln does not load"),
    (b"PK\x03\x04rest", "a .npz or zip archive"),
])
def test_run_reads_data_files_without_pickle_and_names_the_wrong_type(tmp_path, content, words):
    """Before: numpy's 'pickled data ... allow_pickle', which suggests an unsafe workaround."""
    data = tmp_path / "x.npy"
    data.write_bytes(content)
    line = one_line(kiln("run", GOLDEN / "tiny_int8.tflite", "--target", "host", "--input", data,
                         "--output-dir", tmp_path / "out"))
    assert words in line and str(data) in line and "pickle" not in line.replace("Python pickle", "") \
        .replace("need pickle", "")


def test_run_refuses_object_arrays_and_lying_headers(tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    line = one_line(kiln("run", GOLDEN / "tiny_int8.tflite", "--target", "host", "--input", data,
                         "--output-dir", tmp_path / "out"))
    assert "object" in line and str(data) in line
    np.save(data, np.zeros((1, 8, 8, 1), np.int8))
    data.write_bytes(data.read_bytes()[:-10])
    line = one_line(kiln("run", GOLDEN / "tiny_int8.tflite", "--target", "host", "--input", data,
                         "--output-dir", tmp_path / "out"))
    assert "header declares 64 bytes" in line and "holds 54" in line
