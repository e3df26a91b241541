"""`--debug-canaries`: canaries around the arena and after every buffer, checked after each call.

The generated code of a canary build is patched so that one kernel call writes a few bytes
past its output buffer (an overflow that stays inside the arena, where AddressSanitizer sees
nothing): `<name>_run` must return `<NAME>_ERR_CANARY` and name that call. A write into the
arena's frame between two runs (from outside Kiln) is reported with call -1. Without the
option the output holds no trace of canaries (the golden snapshots pin it byte for byte).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from codegen.canaries import canary_bytes
from codegen.compiler import compile_model
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.toolchain import SANITIZE_FLAGS, STRICT_FLAGS

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models"

MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "t.h"
{extern}
static {in_type} in[T_INPUT_0_ELEMENTS];
static {out_type} out[T_OUTPUT_0_ELEMENTS];
int main(void)
{{
    int status;
    memset(in, 1, sizeof(in));
    status = t_run(in, out);
    printf("%d %d\n", status, (int)t_last_error_call);
    {between}
    status = t_run(in, out);
    printf("%d %d %s\n", status, (int)t_last_error_call,
           t_last_error_call >= 0 ? t_call_names[t_last_error_call] : "-");
    return 0;
}}
"""


def canary_build(model: Path):
    return compile_model(model, CompileOptions(target=load_target("host"), name="t", planner="greedy",
                                               canaries=True))


def run(files: dict[str, str], tmp: Path, between: str = "", extern: str = "") -> list[str]:
    for name, text in files.items():
        (tmp / name).write_text(text)
    m = files["t.manifest.json"]
    in_type = "int8_t" if '"dtype": "int8"' in m.split('"outputs"')[0] else "float"
    out_type = "int8_t" if '"dtype": "int8"' in m.split('"outputs"')[1] else "float"
    (tmp / "main.c").write_text(MAIN.format(in_type=in_type, out_type=out_type, between=between, extern=extern))
    exe = tmp / "t_canary"
    cmd = ["gcc", *STRICT_FLAGS, *SANITIZE_FLAGS, "-O1", "-I", str(tmp), str(tmp / "t.c"), str(tmp / "t_weights.c"),
           str(tmp / "main.c"), "-o", str(exe), "-lm"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_default_output_has_no_canaries():
    build = compile_model(GOLDEN / "tiny_int8.tflite", CompileOptions(target=load_target("host"), name="t"))
    assert not any("canar" in text.lower() for text in build.files.values())
    assert "kiln_canary.h" not in build.files


def test_intact_canaries_let_every_run_succeed(tmp_path):
    assert run(canary_build(GOLDEN / "tiny_int8.tflite").files, tmp_path) == ["0 -1", "0 -1 -"]


@pytest.mark.parametrize("model", ["tiny_int8.tflite", "mlp.onnx"])
def test_a_kernel_writing_past_its_buffer_is_caught_after_that_call(model, tmp_path):
    build = canary_build(GOLDEN / model)
    text = build.files["t.c"]
    body = text[text.index("int t_run("):]
    calls = [line for line in body.splitlines() if line.startswith("    kiln_") and "_canary_" not in line]
    # The first call whose last argument (its output) is in the arena: move it 4 bytes on, so
    # that its last 4 bytes land in the buffer's canary.
    k, line = next((k, c) for k, c in enumerate(calls) if re.search(r"&t_arena\[(\d+)\]\);$", c))
    off = int(re.search(r"&t_arena\[(\d+)\]\);$", line).group(1))
    patched = line[:line.rindex("&t_arena[")] + f"&t_arena[{off + 4}]);"
    files = {**build.files, "t.c": text.replace(line, patched, 1)}
    first, second = run(files, tmp_path)
    assert first == f"{100} {k}"  # T_ERR_CANARY, the call that overflowed
    assert second.startswith(f"{100} ")  # still broken: reported again
    assert "#define T_ERR_CANARY 100" in build.files["t.h"]


def test_a_write_into_the_frame_between_runs_is_reported_as_call_minus_one(tmp_path):
    build = canary_build(GOLDEN / "tiny_int8.tflite")
    files = {**build.files, "t.c": build.files["t.c"].replace("static uint8_t t_guarded[", "uint8_t t_guarded[")}
    size = re.search(r"uint8_t t_guarded\[(\d+)\]", files["t.c"]).group(1)
    lines = run(files, tmp_path, between="t_guarded[3] ^= 1;", extern=f"extern uint8_t t_guarded[{size}];")
    assert lines == ["0 -1", "100 -1 -"]


def test_canary_length_keeps_the_arena_aligned():
    assert canary_bytes(4) == 16 and canary_bytes(16) == 16 and canary_bytes(32) == 32 and canary_bytes(24) == 24
