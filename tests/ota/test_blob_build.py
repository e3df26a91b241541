"""`kiln build --weights blob`: same outputs as const weights, no weights in the code, a blob
whose header, manifest entry and layout agree, and weights-only updates of the same model."""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_models import cnn, mlp

from codegen.compiler import compile_model
from codegen.emit.render import model_sources, write_files
from codegen.emit.weights_blob import ALIGN, ERROR_CODES, HEADER_SIZE, read_header
from codegen.options import CompileOptions
from codegen.resources import RUNTIME_C
from codegen.targets import load_target
from codegen.verify import host
from codegen.verify.firmware import elf_sizes, tool
from codegen.verify.run import run_on_target
from codegen.verify.samples import random_samples
from codegen.verify.toolchain import compile_c


def build(model: Path, weights: str, target: str = "host"):
    return compile_model(model, CompileOptions(load_target(target), name="m", weights=weights))


def onnx_file(tmp_path: Path, proto: onnx.ModelProto, stem: str) -> Path:
    path = tmp_path / f"{stem}.onnx"
    onnx.save(proto, path)
    return path


def model_path(request, tmp_path: Path, which: str) -> Path:
    if which in ("mlp", "cnn"):
        return onnx_file(tmp_path, {"mlp": mlp, "cnn": cnn}[which](), which)
    models = request.getfixturevalue("models_dir")
    return models / f"{which}.tflite"


@pytest.mark.parametrize("which", ["mlp", "cnn", "ad01_int8", "kws_ref_model"])
def test_blob_gives_the_outputs_of_const_weights(request, tmp_path, which):
    model = model_path(request, tmp_path, which)
    const, blob = build(model, "const"), build(model, "blob")
    samples = random_samples(const.manifest["inputs"], 3, seed=0)
    expected = host.run_generated(const.files, "m", samples)
    got = host.run_generated(blob.files, "m", samples)
    for e, g in zip(expected, got):
        for name in e:
            assert e[name].tobytes() == g[name].tobytes(), name


def test_blob_build_has_no_weights_in_code_and_a_consistent_blob(models_dir):
    res = build(models_dir / "kws_ref_model.tflite", "blob")
    files, w = res.files, res.manifest["weights"]
    assert "m_weights.c" not in files and "m_weights.c" not in files["kiln.mk"]
    blob = files["m.weights.bin"]
    head = read_header(blob)
    assert (head.magic, head.format_version, head.payload_size) == (b"KLNB", 2, len(blob) - HEADER_SIZE)
    assert head.crc32 == zlib.crc32(blob[HEADER_SIZE:], zlib.crc32(blob[:188]))
    assert head.digest == hashlib.sha256(blob[HEADER_SIZE:]).digest() and not head.signed
    assert head.reserved == bytes(8) and head.reserved2 == bytes(28) and head.signature == bytes(64)
    assert w["blob_bytes"] == len(blob) and w["payload_bytes"] == head.payload_size
    assert w["sha256"] == hashlib.sha256(blob).hexdigest() and w["crc32"] == f"0x{head.crc32:08x}"
    assert w["model_id"] == head.model_id.hex() and w["code_constant_bytes"] == 0
    assert w["payload_bytes"] >= res.manifest["weights_bytes"] > 0
    offsets = [int(v) for v in re.findall(r"m_payload \+ (\d+)\)\)", files["m.c"])]
    assert len(offsets) == len(res.lowered.consts) and all(o % ALIGN == 0 for o in offsets)
    assert not re.search(r"\{\s*-?\d+, -?\d+, -?\d+, -?\d+", files["m.c"].split("m_model_id")[0])


def test_const_build_is_unchanged_by_the_blob_option(tmp_path):
    res = build(onnx_file(tmp_path, mlp(), "mlp"), "const")
    assert "weights" not in res.manifest and "m_weights.c" in res.files
    assert not any(isinstance(v, bytes) for v in res.files.values())
    assert "load_weights" not in res.files["m.c"] + res.files["m.h"]


def _perturbed_mlp() -> onnx.ModelProto:
    proto = mlp()
    for init in proto.graph.initializer:
        arr = onnx.numpy_helper.to_array(init) * np.float32(1.5)
        init.CopyFrom(onnx.numpy_helper.from_array(arr.astype(np.float32), init.name))
    return proto


def test_a_blob_of_new_weights_updates_the_same_code(tmp_path):
    old = build(onnx_file(tmp_path, mlp(), "old"), "blob")
    new = build(onnx_file(tmp_path, _perturbed_mlp(), "new"), "blob")
    assert old.manifest["weights"]["model_id"] == new.manifest["weights"]["model_id"]
    assert old.manifest["weights"]["sha256"] != new.manifest["weights"]["sha256"]
    samples = random_samples(old.manifest["inputs"], 2, seed=1)
    updated = dict(old.files, **{"m.weights.bin": new.files["m.weights.bin"]})  # old code image, new blob
    got = host.run_generated(updated, "m", samples)
    want = host.run_generated(new.files, "m", samples)
    before = host.run_generated(old.files, "m", samples)
    for g, w, b in zip(got, want, before):
        assert g["probs"].tobytes() == w["probs"].tobytes() != b["probs"].tobytes()


def test_error_codes_agree_between_python_and_kiln_blob_h():
    text = (RUNTIME_C / "kiln_blob.h").read_text()
    in_c = {m[0]: int(m[1]) for m in re.findall(r"#define KILN_BLOB_ERR_(\w+) (\d+)", text)}
    assert in_c == {k.removeprefix("BLOB_"): v for k, v in ERROR_CODES.items() if k != "NO_WEIGHTS"}


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc not installed")
def test_code_image_for_cortex_m4_holds_no_weights(models_dir):
    """The code image shrinks by the weights: they are all in the blob (sizes from the objects)."""
    target = load_target("cortex-m4")
    sizes = {}
    for weights in ("const", "blob"):
        res = build(models_dir / "kws_ref_model.tflite", weights, "cortex-m4")
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            write_files(res.files, work)
            objs = []
            for src in model_sources(res.files, "m"):
                obj = work / (Path(src).stem + ".o")
                compile_c(target.cc, [work / src], obj, [*target.cflags, "-c"], [], work)
                objs.append(obj)
            sizes[weights] = elf_sizes(tool(target, "size"), objs, work).flash
        if weights == "blob":
            blob_bytes = res.manifest["weights"]["blob_bytes"]
            weights_bytes = res.manifest["weights_bytes"]
    # kws: 41,524 B (33,728 B of weights) -> 10,232 B: the header checks (CRC-32 and, since blob
    # format 2, the payload's SHA-256) and the binding add about 2.4 KiB, far below the weights
    assert sizes["blob"] <= sizes["const"] - weights_bytes + 3072
    assert blob_bytes >= weights_bytes


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
                    reason="QEMU or the Arm toolchain not installed")
def test_blob_linked_into_cortex_m4_firmware_gives_the_outputs_of_const_weights(models_dir):
    """The firmware harness links the blob into flash and loads it before the first sample."""
    model = models_dir / "ad01_int8.tflite"
    options = CompileOptions(load_target("cortex-m4"), name="m")
    const, blob = build(model, "const", "cortex-m4"), build(model, "blob", "cortex-m4")
    samples = random_samples(const.manifest["inputs"], 2, seed=2)
    expected = run_on_target(const, options, samples)
    got = run_on_target(blob, options, samples)
    for e, g in zip(expected, got):
        assert e["Identity"].tobytes() == g["Identity"].tobytes()
