"""Several models in one firmware (`kiln build A B ...`): each compiled as usual, with its own
header and weights file, all running from one shared arena as large as the largest need."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from codegen.cli import main
from codegen.errors import KilnError
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.variants.build import compile_models
from codegen.variants.chain import verify_models
from onnx_models import cnn, mlp

MLPERF = Path(__file__).resolve().parents[2].parent / "shared" / "models" / "mlperf_tiny"


@pytest.fixture(scope="module")
def two_models(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("two")
    paths = [folder / "mlp.onnx", folder / "cnn.onnx"]
    onnx.save(mlp(), paths[0])
    onnx.save(cnn(), paths[1])
    return paths


def test_one_arena_the_largest_need_own_headers_and_weights(two_models):
    lib = compile_models(two_models, CompileOptions(load_target("host")))
    arenas = {m.name: m.result.manifest["arena_bytes"] for m in lib.members}
    assert lib.arena_bytes == max(arenas.values())
    manifest = json.loads(lib.files["shared.manifest.json"])
    assert manifest["arena_separate_builds_bytes"] == sum(arenas.values())
    assert [m["name"] for m in manifest["models"]] == ["mlp", "cnn"]
    for name in arenas:
        assert {f"{name}.h", f"{name}.c", f"{name}_weights.c"} <= set(lib.files)
        assert "shared_arena[" in lib.files[f"{name}.c"] and "static uint8_t" not in lib.files[f"{name}.c"]
    assert f"#define SHARED_ARENA_SIZE {lib.arena_bytes}u" in lib.files["shared_arena.h"]


def test_both_models_verified_in_one_image(two_models):
    chain, results = verify_models(two_models, CompileOptions(load_target("host")), samples=2, seed=0)
    assert [name for name, _ in results] == ["mlp", "cnn"] and all(r.ok for _, r in results)
    assert chain.manifest["arena_bytes"] == max(m["arena_bytes"] for m in
                                                 (json.loads(chain.files[f"{n}.manifest.json"]) for n in ("mlp", "cnn")))


def test_cli_build_and_verify_several_models(two_models, tmp_path, capsys):
    out = tmp_path / "gen"
    assert main(["build", *map(str, two_models), "--target", "host", "-o", str(out)]) == 0
    assert "for 2 models" in capsys.readouterr().out
    assert (out / "shared_arena.c").is_file() and (out / "mlp.h").is_file() and (out / "cnn_weights.c").is_file()
    assert main(["verify", *map(str, two_models), "--target", "host", "--samples", "2"]) == 0
    assert "ok (2 models)" in capsys.readouterr().out


def test_two_models_of_one_name_are_refused(two_models, tmp_path):
    with pytest.raises(KilnError, match="share the C name 'mlp'"):
        compile_models([two_models[0], two_models[0]], CompileOptions(load_target("host")))


@pytest.mark.slow
@pytest.mark.skipif(not (MLPERF / "vww_96_int8.tflite").is_file(), reason="MLPerf Tiny models not found")
def test_kws_and_vww_in_one_cortex_m4_firmware():
    models = [MLPERF / "kws_ref_model.tflite", MLPERF / "vww_96_int8.tflite"]
    chain, results = verify_models(models, CompileOptions(load_target("cortex-m4")), samples=2, seed=0)
    assert all(r.ok and all(o.max_abs_error == 0 for o in r.outputs) for _, r in results)  # bit-exact
    arenas = [json.loads(chain.files[f"{n}.manifest.json"])["arena_bytes"] for n in ("kws_ref_model", "vww_96_int8")]
    assert chain.manifest["arena_bytes"] == max(arenas) < sum(arenas)
