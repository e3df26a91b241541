"""The output folder holds only what Kiln writes: a user's files and the build's inputs are never
deleted, a second build into the same folder fails at once, the folder is never missing, and OS
errors are one line naming the path (issue 17)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codegen import cli
from codegen.emit import output_folder
from codegen.emit.output_folder import RECORD, check_output_folder, output_lock, write_output
from codegen.errors import KilnError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models"
MODEL = GOLDEN / "tiny_int8.tflite"


def kiln(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codegen", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def gen(tmp_path) -> Path:
    out = tmp_path / "gen"
    proc = kiln("build", MODEL, "--target", "host", "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_manifest_records_every_file_kiln_wrote_with_its_digest(gen):
    (manifest,) = gen.glob("*.manifest.json")
    record = json.loads(manifest.read_text())[RECORD]
    assert sorted(record) == sorted(p.name for p in gen.iterdir() if p != manifest)
    for name, digest in record.items():
        assert hashlib.sha256((gen / name).read_bytes()).hexdigest() == digest


def test_a_model_kept_beside_the_generated_code_is_never_deleted(gen):
    """The issue's case: `kiln build gen/my_model.tflite -o gen` deleted the model, exit 0."""
    model = gen / "my_model.tflite"
    model.write_bytes(MODEL.read_bytes())
    before = snapshot(gen)
    line = one_error_line(kiln("build", model, "--target", "host", "-o", gen))
    assert "holds" in line and "my_model.tflite" in line and "an input of this build" in line
    assert snapshot(gen) == before


def test_a_user_file_in_a_previous_build_is_named_and_kept(gen):
    (gen / "notes.txt").write_text("mine")
    before = snapshot(gen)
    line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", gen))
    assert "'notes.txt', which Kiln did not write" in line
    assert snapshot(gen) == before
    (gen / "notes.txt").unlink()
    (gen / "sub").mkdir()  # a folder of the user's, too
    assert "'sub', which Kiln did not write" in one_error_line(kiln("build", MODEL, "--target", "host", "-o", gen))


def test_a_generated_file_edited_since_is_kept(gen):
    (source,) = [p for p in gen.glob("*.c") if not p.name.endswith("_weights.c")]
    source.write_text(source.read_text() + "/* my fix */\n")
    before = snapshot(gen)
    line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", gen))
    assert f"'{source.name}', changed since Kiln wrote it" in line
    assert snapshot(gen) == before


def test_an_unchanged_previous_build_is_replaced(gen):
    proc = kiln("build", MODEL, "--target", "host", "-o", gen, "--name", "other")
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in gen.iterdir()} >= {"other.h", "other.c", "other.manifest.json"}
    assert not any(p.name.startswith("tiny") for p in gen.iterdir())
    assert sorted(p.name for p in gen.parent.iterdir()) == ["gen"]  # no lock, temporary or old folder


def test_dump_ir_inside_the_output_folder_is_refused_before_any_work(tmp_path):
    """The issue's case: `--dump-ir gen/ir -o gen` wrote the dump, then deleted it with the old folder."""
    out = tmp_path / "gen"
    line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", out, "--dump-ir", out / "ir"))
    assert "an input of this build" in line and "ir" in line
    assert not out.exists()
    line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", tmp_path / "d" / "gen",
                               "--dump-ir", tmp_path / "d"))
    assert "lies inside" in line


def test_leftovers_of_an_interrupted_replacement_are_removed(gen):
    old = gen.parent / ".gen.kiln-old-abcd1234"
    new = gen.parent / ".gen.kiln-new-efgh5678"
    for leftover in (old, new):
        leftover.mkdir()
        (leftover / "tiny_int8.c").write_text("old")
    proc = kiln("build", MODEL, "--target", "host", "-o", gen)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert sorted(p.name for p in gen.parent.iterdir()) == ["gen"]


def test_an_old_folder_that_cannot_be_removed_is_reported(gen, monkeypatch):
    """Before: a `.gen.old.XXXX` folder was left behind silently."""
    files = {"m.manifest.json": json.dumps({"kiln_version": "x"}) + "\n", "m.c": "int x;\n"}

    def stuck(path, onerror=None):
        onerror(os.rmdir, str(path), (OSError, OSError(errno.EBUSY, "Device or resource busy"), None))

    monkeypatch.setattr(output_folder.shutil, "rmtree", stuck)
    notes = write_output(files, gen)
    assert len(notes) == 1 and "could not remove" in notes[0] and ".gen.kiln-old-" in notes[0]
    assert "Device or resource busy" in notes[0]
    assert (gen / "m.c").read_text() == "int x;\n"


def test_os_errors_are_one_line_naming_the_path(tmp_path):
    """Before: an internal error (exit 70) for an unwritable parent, a full disk, a long name."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", blocker / "gen"))
    assert str(blocker) in line and "is a file, not a folder" in line
    line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", tmp_path / ("a" * 300)))
    assert "File name too long" in line and "aaaa" in line
    line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", tmp_path / "gen", "--name", "n" * 300))
    assert "File name too long" in line and "nnnn" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_parent_is_one_line(tmp_path):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", parent / "gen"))
        assert "Permission denied" in line and "ro" in line
    finally:
        parent.chmod(0o755)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_parent_that_takes_no_new_files_names_the_output_folder():
    """Before: the error named Kiln's lock file beside the folder, not the folder asked for."""
    line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", "/proc/kiln-gen"))
    assert "'/proc/kiln-gen'" in line and "kiln-lock" not in line


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"),
                                   OSError(errno.EROFS, "Read-only file system"),
                                   PermissionError(errno.EACCES, "Permission denied")])
def test_a_full_disk_or_read_only_media_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys, error):
    real = Path.write_text

    def failing(self, *a, **k):
        if self.suffix == ".c":
            raise error  # no file name, as a failing write() reports it
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "write_text", failing)
    out = tmp_path / "gen"
    assert cli.main(["build", str(MODEL), "--target", "host", "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and error.strerror in err[0] and str(out) in err[0] and ".c" in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_a_second_build_into_a_locked_folder_fails_at_once(gen):
    before = snapshot(gen)
    with output_lock(gen):
        start = time.monotonic()
        line = one_error_line(kiln("build", MODEL, "--target", "host", "-o", gen))
        assert time.monotonic() - start < 60
    assert "another Kiln build is writing to output folder" in line
    assert snapshot(gen) == before


def test_two_builds_at_once_end_with_one_complete_folder(tmp_path):
    """Before: the loser failed with ENOTEMPTY or FileNotFoundError (exit 70)."""
    out = tmp_path / "gen"
    procs = [subprocess.Popen([sys.executable, "-m", "codegen", "build", str(MODEL), "--target", "host",
                               "-o", str(out)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
             for _ in range(3)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert all(rc == 0 or (rc == 2 and "another Kiln build" in err and len(err.splitlines()) == 1)
               for rc, err in results), results
    assert any(rc == 0 for rc, _ in results)
    check_output_folder(out)  # exactly the files its manifest records, unchanged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"]


WRITER = """
import sys
from pathlib import Path
from codegen.emit.output_folder import write_output
out = Path(sys.argv[1])
for k in range(int(sys.argv[2])):
    write_output({"m.manifest.json": '{"kiln_version": "x"}\\n', "m.c": f"int v{k};\\n"}, out)
"""


def test_the_output_folder_is_never_missing_while_it_is_replaced(tmp_path):
    """Another process reads the folder while builds replace it: every file is always there, old
    or new, never missing (no window between two renames, as before)."""
    out = tmp_path / "gen"
    write_output({"m.manifest.json": '{"kiln_version": "x"}\n', "m.c": "int v;\n"}, out)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(out), "300"])
    looks = missing = 0
    while writer.poll() is None:
        looks += 1
        try:
            with open(out / "m.c") as f:
                text = f.read()
            with open(out / "m.manifest.json") as f:
                complete = "kiln_version" in f.read()
        except FileNotFoundError:
            text, complete = "", False
        missing += not (text.startswith("int v") and complete)
    assert writer.wait() == 0
    assert looks > 100 and missing == 0, (looks, missing)
    assert (out / "m.c").read_text() == "int v299;\n"


def test_a_symlink_in_the_output_folder_is_refused(gen):
    (gen / "link.c").symlink_to(MODEL)
    with pytest.raises(KilnError, match="'link.c', which Kiln did not write"):
        check_output_folder(gen)


def test_a_board_projects_own_build_folder_is_replaced_with_it(tmp_path):
    """`make` in a generated board project writes build/: derived, so rebuilding the project
    (the examples' Makefiles do when the model changes) still replaces the folder."""
    out = tmp_path / "proj"
    assert kiln("build", MODEL, "--board", "mps2-an386", "-o", out).returncode == 0
    (out / "build").mkdir()
    (out / "build" / "tiny_int8.elf").write_bytes(b"\x7fELF")
    proc = kiln("build", MODEL, "--board", "mps2-an386", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert not (out / "build").exists()
    (out / "notes.txt").write_text("mine")
    assert "'notes.txt', which Kiln did not write" in one_error_line(kiln("build", MODEL, "--board", "mps2-an386",
                                                                            "-o", out))
