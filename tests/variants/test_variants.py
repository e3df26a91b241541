"""Shape variants (`kiln build MODEL --variant ...`): one library with every variant's own
graph, fusion and plan, one arena sized for the largest, shared constants once, a dispatcher."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from codegen.cli import main
from codegen.errors import KilnError
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.variants.build import compile_variants
from codegen.variants.commands import verify_library
from codegen.variants.spec import parse_variants
from codegen.verify.toolchain import STRICT_FLAGS
from onnx_models import ort_outputs
from tests.variants.models import seq_classifier

SEQ = ["x=1,8,32", "x=1,8,64", "x=1,8,128"]
HERE = Path(__file__).resolve().parent
SHARED = CompileOptions(load_target("host"), variant_kernels="shared")  # auto: own on the host


@pytest.fixture(scope="module")
def seq_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("seq") / "seqcls.onnx"
    onnx.save(seq_classifier(), path)
    return path


@pytest.fixture(scope="module")
def seq_library(seq_model):
    return compile_variants(seq_model, SHARED, parse_variants(SEQ, seq_model))


def test_items_are_shapes_or_values_by_the_models_inputs(seq_model, tmp_path):
    (v0,) = parse_variants(["x=1,8,32"], seq_model)
    assert v0.input_shapes == (("x", (1, 8, 32)),) and v0.specialized == ()
    from tests.frontends.test_onnx_specialize import range_plus_x

    rng = range_plus_x(tmp_path)
    (v,) = parse_variants(["start=1;limit=5;delta=0.5"], rng)
    assert v.input_shapes == () and dict(v.specialized) == {"start": (1,), "limit": (5,), "delta": (0.5,)}


@pytest.mark.parametrize("texts, message", [
    (["x=1,8,a"], "is not NAME=v0,v1"),
    ([" ; "], "names no input"),
    (["x=1,8,32", "x=1,8,32"], "repeats variant v0"),
    (["x=1,8,-3"], "takes a shape"),
])
def test_malformed_variants_are_one_clear_error(seq_model, texts, message):
    with pytest.raises(KilnError, match=message):
        parse_variants(texts, seq_model)


def test_one_arena_for_the_largest_and_constants_once(seq_library):
    lib = seq_library
    manifest = json.loads(lib.files["seqcls.manifest.json"])
    arenas = [v["arena_bytes"] for v in manifest["variants"]]
    assert arenas == sorted(arenas) and arenas[0] < arenas[-1]  # the arena grows with the length
    assert manifest["arena_bytes"] == lib.arena_bytes == max(arenas)
    assert manifest["arena_separate_builds_bytes"] == sum(arenas)
    # the weights do not depend on the length: one copy serves the three variants
    one = manifest["variants"][0]["weights_bytes"]
    assert manifest["weights_bytes"] == one == manifest["weights_shared_bytes"]
    assert manifest["weights_separate_builds_bytes"] == 3 * one
    assert all(v["weights_own_bytes"] == 0 for v in manifest["variants"])
    for k, v in enumerate(manifest["variants"]):
        assert v["entry"] == f"seqcls_v{k}_run" and v["inputs"][0]["shape"] == [1, 8, [32, 64, 128][k]]
        member = json.loads(lib.files[v["manifest"]])
        assert member["links_with"] == ["seqcls_weights.c", "seqcls_kernels.c", "seqcls_arena.c"]
    # no variant defines an arena or a constant of its own: the library's files do
    for k in range(3):
        src = lib.files[f"seqcls_v{k}.c"]
        assert "seqcls_arena[" in src and "static uint8_t" not in src
        assert f"seqcls_v{k}_weights.c" not in lib.files
    assert lib.files["seqcls_weights.c"].count("const float seqcls_") == 2 * len(lib.shared.decls)


def test_kernels_the_variants_share_are_defined_once(seq_library):
    lib = seq_library
    manifest = json.loads(lib.files["seqcls.manifest.json"])
    shared = manifest["kernels_shared"]
    assert "conv2d_f32" in shared and manifest["kernels_shared_in"] == "seqcls_kernels.c"
    for k, v in enumerate(manifest["variants"]):
        assert v["kernels_shared"] == shared and v["kernels_own"] == []
        src = lib.files[f"seqcls_v{k}.c"]
        assert "kiln_conv2d_f32(&" in src and "void kiln_conv2d_f32(" not in src  # called, not defined
        assert '#include "seqcls_kernels.h"' in src
    assert lib.files["seqcls_kernels.c"].count("void kiln_conv2d_f32(") == 1
    assert "#define kiln_conv2d_f32 seqcls_kiln_conv2d_f32" in lib.files["seqcls_kernels.h"]
    assert manifest["variant_kernels"] == {"shared": True, "why": "--variant-kernels shared"}


@pytest.mark.parametrize("target, shared", [("host", False), ("cortex-a72", False), ("cortex-m4", True)])
def test_kernels_are_shared_by_default_on_bare_metal_targets(seq_model, target, shared):
    lib = compile_variants(seq_model, CompileOptions(load_target(target)), parse_variants(SEQ[:2], seq_model))
    manifest = json.loads(lib.files["seqcls.manifest.json"])
    assert manifest["variant_kernels"]["shared"] is shared and ("seqcls_kernels.c" in lib.files) is shared
    own = manifest["variants"][0]["kernels_own"]
    assert (own == []) is shared and ("void kiln_conv2d_f32(" in lib.files["seqcls_v0.c"]) is not shared


def test_a_kernel_whose_block_is_not_first_stays_in_each_variant():
    from codegen.variants.kernels import split_kernel

    block = "typedef struct {\n    int32_t n;\n} kiln_k_params;\n"
    entry = "static void kiln_k(const kiln_k_params *p,\n                   float *x)\n{\n    (void)p;\n}\n"
    kernel = split_kernel("k", "kiln_k", "/* why */\n#include <arm_neon.h>\n" + block + entry)
    assert kernel.prototype == "void kiln_k(const kiln_k_params *p,\n            float *x)"
    assert kernel.body.startswith("#include <arm_neon.h>\n") and "static void kiln_k" not in kernel.body
    assert split_kernel("k", "kiln_k", "#define N 4\n" + block + entry) is None  # a macro before the block
    assert split_kernel("k", "kiln_k", block + entry + entry) is None  # the entry point twice


def test_dispatcher_selects_by_shape_and_refuses_others(seq_library, seq_model, tmp_path):
    for name, content in seq_library.files.items():
        (tmp_path / name).write_text(content)
    sources = sorted(f for f in seq_library.files if f.endswith(".c"))
    subprocess.run(["gcc", *STRICT_FLAGS, "-O2", "-c", *sources], cwd=tmp_path, check=True)
    exe = tmp_path / "dispatch"
    subprocess.run(["gcc", "-std=c99", "-O2", "-I", str(tmp_path), str(HERE / "dispatch_main.c"),
                    *[str(tmp_path / (s[:-2] + ".o")) for s in sources], "-o", str(exe), "-lm"], check=True)
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    model = onnx.load(seq_model)
    for k, (line, length) in enumerate(zip(lines, (32, 64, 128, 48))):
        fields = line.split()
        if length == 48:  # built for none: -1 and <NAME>_ERR_NO_VARIANT
            assert fields[:2] == ["-1", "31"]
            continue
        assert fields[:2] == [str(k), "0"]
        seed, values = np.uint32(k + 1), []
        for _ in range(8 * length):
            seed = np.uint32((int(seed) * 1103515245 + 12345) & 0xFFFFFFFF)
            values.append((((int(seed) >> 16) & 0xFFFF) - 32768) / 32768.0)
        x = np.array(values, np.float32).reshape(1, 8, length)
        expected = ort_outputs(model, {"x": x})["scores"].reshape(-1)
        np.testing.assert_allclose(np.array(fields[2:], np.float32), expected, rtol=1e-5, atol=1e-6)


def test_every_variant_verified_as_it_links_in_the_library(seq_model):
    checks = verify_library(seq_model, SHARED, SEQ, samples=2, seed=0)
    assert [c.name for c in checks] == ["seqcls_v0", "seqcls_v1", "seqcls_v2"]
    assert all(c.result.ok for c in checks)


def test_value_variants_dispatch_by_value(tmp_path):
    from tests.frontends.test_onnx_specialize import range_plus_x

    model = range_plus_x(tmp_path)
    variants = ["start=1;limit=5;delta=0.5", "start=0;limit=4;delta=1"]
    lib = compile_variants(model, CompileOptions(load_target("host")), parse_variants(variants, model))
    manifest = json.loads(lib.files["m.manifest.json"])
    assert [v["outputs"][0]["shape"] for v in manifest["variants"]] == [[8], [4]]
    assert "M_V1_INPUT_2_VALUE" in lib.files["m.c"]  # the dispatcher compares the limit's value
    checks = verify_library(model, CompileOptions(load_target("host")), variants, samples=1, seed=0)
    assert all(c.result.ok for c in checks)


def test_cli_build_verify_and_run(seq_model, tmp_path, capsys):
    out = tmp_path / "gen"
    args = ["build", str(seq_model), "--target", "host", "-o", str(out), *[a for v in SEQ for a in ("--variant", v)]]
    assert main(args) == 0
    assert "one arena of" in capsys.readouterr().out
    assert (out / "seqcls.h").is_file() and (out / "seqcls_v2.h").is_file() and (out / "kiln.mk").is_file()
    assert "seqcls_weights.c" in (out / "kiln.mk").read_text()
    assert main(args) == 0  # the folder is a previous Kiln build: replaced
    x = tmp_path / "x.npy"
    np.save(x, np.ones((1, 8, 64), np.float32))
    assert main(["run", str(seq_model), "--target", "host", "--input", str(x), "--output-dir", str(tmp_path / "o"),
                 *[a for v in SEQ for a in ("--variant", v)]]) == 0
    assert "ran seqcls_v1" in capsys.readouterr().out
    np.save(x, np.ones((1, 8, 50), np.float32))
    assert main(["run", str(seq_model), "--target", "host", "--input", str(x), "--output-dir", str(tmp_path / "o"),
                 *[a for v in SEQ for a in ("--variant", v)]]) == 2
    assert "no variant was built for inputs of shape [1, 8, 50]" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--board", "mps2-an386"], "--board builds one model"),
    (["--debug-canaries"], "--debug-canaries guards one arena"),
    (["--weights", "blob"], "--weights blob holds one model"),
])
def test_options_a_library_does_not_take(seq_model, tmp_path, capsys, extra, message):
    assert main(["build", str(seq_model), "--target", "host", "-o", str(tmp_path / "g"), "--variant", SEQ[0],
                 *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "g").exists()


@pytest.mark.slow
def test_variants_verified_on_cortex_m4(seq_model):
    checks = verify_library(seq_model, CompileOptions(load_target("cortex-m4")), SEQ, samples=2, seed=0)
    assert all(c.result.ok for c in checks)


@pytest.mark.slow
def test_cli_profile_counts_every_variant_on_cortex_a72(tmp_path, capsys):
    from tests.variants.models import batch_cnn

    model = tmp_path / "batchcnn.onnx"
    onnx.save(batch_cnn(), model)
    assert main(["profile", str(model), "--target", "cortex-a72", "--variant", "image=1,3,16,16",
                 "--variant", "image=4,3,16,16"]) == 0
    table = capsys.readouterr().out.split("kiln profile: instructions from the call into the model to its return")[1]
    counts = [int(line.split()[-1].replace(",", "")) for line in table.strip().splitlines()]
    assert len(counts) == 2 and 3 * counts[0] < counts[1] < 5 * counts[0]  # four samples: about four times one


def test_tflite_variants_of_an_open_dimension_share_the_int8_lstm(tmp_path):
    """A TFLite model whose steps axis is open (-1 in its shape signature), two variants: one
    integer LSTM kernel for both, each variant bit-exact with TFLite Micro running the model
    written at that length."""
    from tflite_recurrent_models import lstm_model

    model = tmp_path / "lstm.tflite"
    model.write_bytes(lstm_model(steps=16, dtype="int8", open_steps=True, features=4, hidden=8))
    variants = ["x=1,4,4", "x=1,16,4"]
    lib = compile_variants(model, SHARED, parse_variants(variants, model))
    assert "lstm_s8" in json.loads(lib.files["lstm.manifest.json"])["kernels_shared"]
    checks = verify_library(model, SHARED, variants, samples=2, seed=0)
    assert all(c.result.ok and all(o.max_abs_error == 0 for o in c.result.outputs) for c in checks)


def test_profile_writes_each_variants_instructions_into_the_manifest(seq_model, tmp_path, capsys):
    variants = [a for v in ("x=1,8,8", "x=1,8,16") for a in ("--variant", v)]
    out = tmp_path / "gen"
    assert main(["build", str(seq_model), "--target", "cortex-m4", "-o", str(out), *variants]) == 0
    assert main(["profile", str(seq_model), "--target", "cortex-m4", *variants, "--write-manifest", str(out)]) == 0
    assert "instructions written into" in capsys.readouterr().out
    manifest = json.loads((out / "seqcls.manifest.json").read_text())
    counts = [v["instructions"] for v in manifest["variants"]]
    assert 0 < counts[0] < counts[1] and manifest["instructions_measured"]["board"] == "mps2-an386"
    # counts of the other kernel code, or of another target's build, are not written
    assert main(["profile", str(seq_model), "--target", "cortex-m4", *variants, "--variant-kernels", "own",
                 "--write-manifest", str(out)]) == 2
    assert "built with shared kernel code" in capsys.readouterr().err
    assert main(["build", str(seq_model), "--target", "host", "-o", str(out), *variants]) == 0
    assert main(["profile", str(seq_model), "--target", "cortex-m4", *variants, "--write-manifest", str(out)]) == 2
    assert "for another target" in capsys.readouterr().err
