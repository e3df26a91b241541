"""A failed build leaves the previous output exactly as it was, and no temporary folder behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.emit.output_folder import write_output
from codegen.errors import KilnError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def kiln(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codegen", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ}, timeout=120)


@pytest.fixture
def previous(tmp_path) -> Path:
    out = tmp_path / "gen"
    assert kiln("build", GOLDEN / "tiny_int8.tflite", "--target", "host", "-o", out).returncode == 0
    return out


def test_malformed_model_or_budget_failure_leaves_previous_output(previous, tmp_path):
    before = snapshot(previous)
    broken = tmp_path / "broken.tflite"
    data = (GOLDEN / "tiny_int8.tflite").read_bytes()
    broken.write_bytes(data[: len(data) // 2])
    for args in (["build", broken, "--target", "host", "-o", previous],
                 ["build", GOLDEN / "mlp.onnx", "--target", "host", "-o", previous, "--ram-limit", "1"]):
        proc = kiln(*args)
        assert proc.returncode == 2, proc.stderr
        assert snapshot(previous) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.tflite", "gen"]


def test_a_failure_while_writing_leaves_previous_output(previous, tmp_path, monkeypatch):
    before = snapshot(previous)
    written = []
    real = Path.write_text

    def flaky(self, text, *a, **k):
        written.append(self.name)
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        return real(self, text, *a, **k)

    monkeypatch.setattr(Path, "write_text", flaky)
    with pytest.raises(KilnError, match="No space left on device"):
        write_output({f"f{i}.c": "x" for i in range(5)}, previous)
    monkeypatch.undo()
    assert snapshot(previous) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"]


def test_folders_kiln_must_not_replace_are_refused_before_any_work(tmp_path):
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / "todo.txt").write_text("mine")
    model = project / "mlp.onnx"
    model.write_bytes((GOLDEN / "mlp.onnx").read_bytes())
    for out, words in ((".", "is the current folder or contains it"), ("..", "is the current folder or contains it"),
                       ("mlp.onnx", "is an existing file, not a folder"),
                       ("notes", "is not empty and holds no Kiln build")):
        proc = subprocess.run([sys.executable, "-m", "codegen", "build", "mlp.onnx", "--target", "host", "-o", out],
                              cwd=project, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert (project / "notes" / "todo.txt").read_text() == "mine" and model.is_file()
    assert sorted(p.name for p in project.iterdir()) == ["mlp.onnx", "notes"]
    (project / "empty").mkdir()
    for _ in range(2):  # an empty folder, then the Kiln build it now holds
        proc = subprocess.run([sys.executable, "-m", "codegen", "build", "mlp.onnx", "--target", "host", "-o", "empty"],
                              cwd=project, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
