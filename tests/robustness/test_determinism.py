"""Same model and options, byte-identical output: across processes, hash seeds, folders.

Each model is built twice by the real `kiln build` in separate processes, with different
PYTHONHASHSEED values, from different working directories, with the model at a different
place (relative path in one run, absolute in the other) and the output folder given as a
relative and as an absolute path; the CP-SAT planner is used so that the solver's result
must be reproducible too. The two output folders must hold the same files with the same
bytes, and no file may contain a host path (the folders involved, the home directory).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from onnx_models import RUNNABLE

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models"
MLPERF = Path(__file__).resolve().parents[3] / "shared" / "models" / "mlperf_tiny"


def _model(tmp_path: Path, which: str) -> Path:
    if which in RUNNABLE:
        path = tmp_path / f"{which}.onnx"
        onnx.save(RUNNABLE[which](), path)
        return path
    if which.startswith("golden/"):
        return GOLDEN / which.split("/", 1)[1]
    path = MLPERF / which
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path


def _start(model: Path, cwd: Path, out: Path | str, seed: str, extra: list[str]) -> subprocess.Popen:
    cwd.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.Popen([sys.executable, "-m", "codegen", "build", str(model), "--target", "host",
                             "-o", str(out), "--planner", "cpsat", "--time-limit", "60", *extra],
                            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _files(proc: subprocess.Popen, cwd: Path, out: Path | str) -> dict[str, bytes]:
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "warning" not in stderr  # the solver finished: no wall-clock-dependent plan
    folder = Path(out) if Path(out).is_absolute() else cwd / out
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("which,extra", [
    ("cnn", ["--name", "net"]), ("qdq", []), ("golden/tiny_int8.tflite", []), ("kws_ref_model.tflite", []),
    ("kws_ref_model_float32.tflite", []), ("golden/mlp.onnx", ["--debug-canaries"]),
])
def test_builds_are_byte_identical_across_processes_seeds_and_folders(which, extra, tmp_path):
    source = _model(tmp_path, which)
    a_dir, b_dir = tmp_path / "a" / "models", tmp_path / "b" / "x" / "y"
    for d in (a_dir, b_dir):
        d.mkdir(parents=True)
        shutil.copy(source, d / source.name)
    runs = [(Path("models") / source.name, tmp_path / "a", "gen", "0"),
            (b_dir / source.name, tmp_path / "elsewhere", tmp_path / "out" / "gen", "12345")]
    procs = [_start(model, cwd, out, seed, extra) for model, cwd, out, seed in runs]  # concurrently
    first, second = (_files(p, cwd, out) for p, (_, cwd, out, _) in zip(procs, runs))
    assert sorted(first) == sorted(second)
    for name in first:
        assert first[name] == second[name], f"{name} differs between the two builds"
    host_paths = [str(tmp_path), str(Path.home()), os.getcwd(), str(Path(__file__).resolve().parents[2])]
    for name, data in first.items():
        for p in host_paths:
            assert p.encode() not in data, f"{name} contains the host path {p}"
