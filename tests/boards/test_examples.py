"""The examples end to end, each copied out of the repository first (a user copies the folder):
`make run` prints the expected label, `make size` the firmware against the board's budget.
Marked slow: each compiles a real MLPerf Tiny model and runs it under emulation (5-10 s); the
sine example of `make demo` is small enough for the default run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.project import missing_toolchain
from codegen.targets import load_target

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
KILN = f"{sys.executable} -m codegen"


def run_example(name: str, target: str, models: Path, tmp_path: Path, *goals: str) -> str:
    reason = missing_toolchain(load_target(target))
    if reason:
        pytest.skip(reason)
    folder = tmp_path / name
    shutil.copytree(EXAMPLES / name, folder, ignore=shutil.ignore_patterns("build"))
    proc = subprocess.run(["make", "-C", str(folder), *goals, f"KILN={KILN}", f"MODELS={models}",
                           f"PYTHON={sys.executable}"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def test_sine_cortex_m4_draws_the_sine(tmp_path):
    """`make demo`'s example, with the model the tflite-micro package installed here ships (the
    example's own fetch downloads that package with pip)."""
    from importlib.resources import files

    model = files("tflite_micro") / "python" / "tflite_micro" / "sine_float.tflite"
    out = run_example("sine_cortex_m4", "cortex-m4", tmp_path, tmp_path, "run", "verify", f"MODEL={model}")
    assert "+1.57  +1.00  +1.00" in out and "largest difference from sin(x): +0.04" in out, out
    assert "kiln verify: ok" in out


@pytest.mark.slow
def test_kws_cortex_m4_hears_yes(models_dir, tmp_path):
    out = run_example("kws_cortex_m4", "cortex-m4", models_dir, tmp_path, "run", "size")
    assert "heard: yes (48 %)" in out  # TFLite Micro's int8 score for yes.bin: -5 -> 123/256
    assert "flash" in out and "B of    4194304 B" in out


@pytest.mark.slow
def test_vww_cortex_m7_sees_the_person_and_the_empty_landscape(models_dir, tmp_path):
    out = run_example("vww_cortex_m7", "cortex-m7", models_dir, tmp_path, "run")
    assert "person.ppm: seen: person (86 %)" in out and "no_person.ppm: seen: no person (97 %)" in out


@pytest.mark.slow
def test_cortex_a_hears_yes(models_dir, tmp_path):
    if shutil.which("qemu-aarch64") is None:
        pytest.skip("qemu-aarch64 not found (Debian package qemu-user)")
    out = run_example("cortex_a", "cortex-a72", models_dir, tmp_path, "run")
    assert "heard: yes (52 %)" in out
