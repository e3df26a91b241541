"""Campaign classes around a build rather than inside the model file (issue 17): output folders
holding foreign files or inputs, OS faults while writing, concurrent builds into one folder, and
ONNX external data with damaged sizes, offsets and locations.

Each scenario builds a small model through the real CLI entry (`codegen.cli.main`, in-process,
forked processes racing for one folder for concurrent builds) in a fresh folder and judges the outcome:

- `ok` / `kiln_error`: a build, or exit 2 with exactly one stderr line;
- `lost_file`: a file the user had (outside the output folder, or inside one Kiln must not
  replace) changed or disappeared;
- `partial_output`: the output folder is neither the previous build nor a complete new one,
  or a temporary folder was left behind;
- `wrong_refusal`: a folder Kiln may replace was refused;
- `crash` / `bad_message`: an internal error (exit 70), a traceback, several lines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import io
import json
import os
import random
import select
import time
import traceback
from pathlib import Path
from unittest import mock

import onnx

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "models"
MODELS = (GOLDEN / "tiny_int8.tflite", GOLDEN / "mlp.onnx")
ERRNOS = (errno.ENOSPC, errno.EACCES, errno.EROFS, errno.ENAMETOOLONG, errno.EIO, errno.EDQUOT, errno.EMFILE)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (symlinks as their target text) by relative path."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        if p.is_symlink():
            out[rel] = b"-> " + os.readlink(p).encode()
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


@dataclasses.dataclass
class CliRun:
    """`kiln ARGS` run in this process through the real entry (codegen.cli.main)."""
    rc: int
    stderr: str
    raw_multiline: bool = False  # an error message had several lines before the CLI escaped them
    traceback: str = ""          # of an internal error (the CLI itself prints one line)


def run_cli(args: list) -> CliRun:
    from codegen import cli

    raw_multiline, caught = [False], [""]
    one_line, commands = cli._one_line, dict(cli.COMMANDS)

    def watched_one_line(text: str) -> str:
        raw_multiline[0] |= "\n" in text
        return one_line(text)

    def traced(command):
        def run(parsed):
            try:
                return command(parsed)
            except Exception:
                caught[0] = traceback.format_exc()[-4000:]
                raise
        return run

    err = io.StringIO()
    with mock.patch.object(cli, "_one_line", watched_one_line), \
            mock.patch.dict(cli.COMMANDS, {k: traced(v) for k, v in commands.items()}), \
            contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = cli.main([str(a) for a in args])
        except SystemExit as exc:  # argparse
            rc = exc.code if isinstance(exc.code, int) else 2
    return CliRun(rc, err.getvalue(), raw_multiline[0], caught[0])


def _main(args: list) -> tuple[int, str]:
    run = run_cli(args)
    return run.rc, run.stderr + ("\n(raw message had several lines)" if run.raw_multiline else "")


def _judge_cli(rc: int, err: str) -> tuple[str, str]:
    lines = err.splitlines()
    if rc == 0:
        return "ok", ""
    if "MemoryError" in err:
        return "memory", err[-3000:]
    if rc == 2 and len(lines) == 1 and "Traceback" not in err:
        return "kiln_error", lines[0]
    return ("crash" if rc == 70 or "Traceback" in err else "bad_message"), err[-3000:]


def _consistent(out: Path) -> bool:
    """`out` holds exactly the files its manifest records, unchanged."""
    from codegen.emit.output_folder import RECORD, check_output_folder

    try:
        check_output_folder(out)
        (manifest,) = out.glob("*.manifest.json")
        record = json.loads(manifest.read_text())[RECORD]
    except Exception:
        return False
    return sorted(record) == sorted(p.name for p in out.iterdir() if p != manifest)


def _leftovers(work: Path) -> list[str]:
    """Hidden folders of a replacement left beside the output. A lock file left by a failed
    unlink is not one: harmless, reused and removed by the next build."""
    return [p.name for p in work.iterdir() if p.name.startswith(".gen.") and p.name != ".gen.kiln-lock"]


def _previous_build(out: Path, model: Path) -> None:
    rc, err = _main(["build", model, "--target", "host", "-o", out])
    assert rc == 0, err


def out_folder(rng: random.Random, work: Path) -> tuple[str, str]:
    """An output folder prepared as a careless user leaves it, then `kiln build -o` into it."""
    model_src = rng.choice(MODELS)
    out = work / "gen"
    how = rng.choice(["new", "empty", "previous", "foreign_file", "foreign_dir", "hidden_file", "symlink",
                      "edited", "model_inside", "dump_inside", "is_file", "leftovers", "other_build"])
    model = work / model_src.name
    model.write_bytes(model_src.read_bytes())
    args = ["build", model, "--target", "host", "-o", out]
    replaceable = how in ("new", "empty", "previous", "leftovers", "other_build")
    if how == "empty":
        out.mkdir()
    elif how not in ("new", "is_file"):
        _previous_build(out, rng.choice(MODELS))
    if how == "foreign_file":
        (out / rng.choice(["notes.txt", "main.c", "Makefile", "model.onnx"])).write_text("mine")
    elif how == "foreign_dir":
        (out / "build").mkdir()
        (out / "build" / "a.o").write_bytes(b"\x7fELF")
    elif how == "hidden_file":
        (out / ".gitignore").write_text("*\n")
    elif how == "symlink":
        (out / "weights.c").symlink_to(model)
    elif how == "edited":
        victim = rng.choice([p for p in out.iterdir() if not p.name.endswith(".manifest.json")])
        victim.write_bytes(victim.read_bytes() + b"\n/* mine */\n")
    elif how == "model_inside":
        model = out / model_src.name
        model.write_bytes(model_src.read_bytes())
        args[1] = model
    elif how == "dump_inside":
        args += ["--dump-ir", out / "ir"]
    elif how == "is_file":
        out.write_text("mine")
    elif how == "leftovers":
        for name in (".gen.kiln-old-abcd1234", ".gen.kiln-new-efgh5678"):
            (work / name).mkdir()
            (work / name / "x.c").write_text("old")
    elif how == "other_build":
        args += ["--name", "other"]
    before = snapshot(work)
    rc, err = _main(args)
    kind, message = _judge_cli(rc, err)
    if kind not in ("ok", "kiln_error"):
        return kind, message
    after = snapshot(work)
    if rc == 0:
        if not replaceable:
            return "lost_file", f"{how}: replaced a folder it must not"
        outside = {k: v for k, v in before.items() if not k.startswith(("gen/", ".gen."))}
        if {k: v for k, v in after.items() if not k.startswith("gen/")} != outside:
            return "lost_file", f"{how}: a file outside the output folder changed"
        if not _consistent(out) or _leftovers(work):
            return "partial_output", f"{how}: {sorted(after)[:20]}"
        return "ok", ""
    if after != before:
        return "lost_file", f"{how}: refused ({message}) but files changed"
    if replaceable:
        return "wrong_refusal", f"{how}: {message}"
    return kind, message


_FAULT_TARGETS = ("Path.write_text", "Path.write_bytes", "os.rename", "os.chmod", "tempfile.mkdtemp",
                  "os.open", "os.unlink")


def os_fault(rng: random.Random, work: Path) -> tuple[str, str]:
    """An OSError (full disk, permissions, read-only media, name too long...) at the n-th call of
    a file operation during `kiln build`; before: exit 70 with no path."""
    model = rng.choice(MODELS)
    out = work / "gen"
    if rng.random() < 0.6:
        _previous_build(out, rng.choice(MODELS))
    before = snapshot(work)
    target = rng.choice(_FAULT_TARGETS)
    code, nth = rng.choice(ERRNOS), rng.randrange(1, 8)
    owner, attr = target.split(".")
    module = {"Path": Path, "os": os, "tempfile": __import__("tempfile")}[owner]
    real = getattr(module, attr)
    calls = [0]

    def faulty(*a, **k):
        calls[0] += 1
        if calls[0] == nth:
            raise OSError(code, os.strerror(code))  # as a failing write() reports it: no file name
        return real(*a, **k)

    with mock.patch.object(module, attr, faulty):
        rc, err = _main(["build", model, "--target", "host", "-o", out])
    kind, message = _judge_cli(rc, err)
    if kind not in ("ok", "kiln_error"):
        return kind, message
    if rc == 2 and os.strerror(code) in message and "/" not in message:
        return "bad_message", f"{target}: no path named: {message}"
    after = snapshot(work)
    outside = {k: v for k, v in before.items() if not k.startswith(("gen/", ".gen."))}
    if {k: v for k, v in after.items() if not k.startswith(("gen/", ".gen."))} != outside:
        return "lost_file", f"{target}: a file outside the output folder changed"
    if rc == 2 and after != before and not (out.exists() and _consistent(out)):
        return "partial_output", f"{target} errno {code}: {message}"
    if rc == 0 and not _consistent(out):
        return "partial_output", f"{target} errno {code}: build ok but folder inconsistent"
    unreported = [name for name in _leftovers(work) if name not in err]  # cleaned, or named in a warning
    if unreported and rc == 0:
        return "partial_output", f"{target}: leftovers {unreported}"
    return kind, message


def forked_builds(argvs: list[list], timeout: float = 300.0) -> list[tuple[int, str]]:
    """Each argv through the CLI entry in its own forked process, all started at once: real
    processes racing for one folder (as `kiln` processes would), without a fresh interpreter
    each. (rc, stderr) per argv; a process still running after `timeout` is killed (rc -9)."""
    procs = []
    for argv in argvs:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(read_fd)
                rc, err = _main(argv)
                os.write(write_fd, json.dumps([rc, err]).encode())
            except BaseException:  # noqa: BLE001 - reported as a crash below
                code = 3
            finally:
                os._exit(code)
        os.close(write_fd)
        procs.append((pid, read_fd))
    deadline = time.monotonic() + timeout
    results = []
    for pid, read_fd in procs:
        chunks = []
        while True:
            ready, _, _ = select.select([read_fd], [], [], max(0.0, deadline - time.monotonic()))
            data = os.read(read_fd, 1 << 16) if ready else b""
            if not data:
                break
            chunks.append(data)
        if not ready:
            os.kill(pid, 9)
        os.close(read_fd)
        _, status = os.waitpid(pid, 0)
        text = b"".join(chunks).decode()
        results.append(tuple(json.loads(text)) if text else (-9 if not ready else 70, f"process ended: {status}"))
    return results


def concurrent(rng: random.Random, work: Path) -> tuple[str, str]:
    """Two or three `kiln build` processes into one folder at once; before: ENOTEMPTY or
    FileNotFoundError (exit 70) and a moment without the folder."""
    out = work / "gen"
    if rng.random() < 0.5:
        _previous_build(out, rng.choice(MODELS))
    argvs = [["build", rng.choice(MODELS), "--target", "host", "-o", out] for _ in range(rng.choice([2, 2, 3]))]
    results = forked_builds(argvs)
    for rc, err in results:
        kind, message = _judge_cli(rc, err)
        if kind not in ("ok", "kiln_error"):
            return kind, message
        if rc == 2 and "another Kiln build" not in message:
            return "bad_message", message
    if not any(rc == 0 for rc, _ in results):
        return "wrong_refusal", "no build succeeded"
    if not _consistent(out) or _leftovers(work):
        return "partial_output", f"{sorted(p.name for p in work.iterdir())}"
    return ("kiln_error" if any(rc == 2 for rc, _ in results) else "ok"), ""


def onnx_external(rng: random.Random, work: Path, seed_data: bytes) -> tuple[str, str, Path]:
    """An ONNX model whose initializers live in a data file beside it, with sizes, offsets,
    lengths or locations damaged, or the data file replaced by a large sparse file. Returns the
    model path for the caller to compile under its bounds."""
    m = onnx.ModelProto()
    m.ParseFromString(seed_data)
    folder = work / "m"
    folder.mkdir()
    path = folder / "model.onnx"
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.data", size_threshold=0)
    m = onnx.load(str(path), load_external_data=False)
    tensors = [t for t in m.graph.initializer if t.external_data]
    how = rng.choice(["no_length", "length", "offset", "location", "sparse", "truncated", "dims", "ok"])
    if tensors and how != "ok":
        t = rng.choice(tensors)
        entries = {e.key: e for e in t.external_data}
        if how == "no_length" and "length" in entries:
            t.external_data.remove(entries["length"])
        elif how == "length" and "length" in entries:
            entries["length"].value = str(rng.choice([0, 1, -1, 2 ** 31, 2 ** 63, 10 ** 30]))
        elif how == "offset":
            value = str(rng.choice([-1, 2 ** 31, 2 ** 62, 7, 3])) if rng.random() < 0.9 else "x"
            if "offset" in entries:
                entries["offset"].value = value
            else:
                onnx.helper.set_external_data(t, location=entries["location"].value, offset=int(value)
                                              if value != "x" else 0)
        elif how == "location":
            entries["location"].value = rng.choice(["../m/model.data", "/etc/passwd", "missing.bin", ".",
                                                    "../../etc/passwd", "model.onnx"])
        elif how == "sparse":  # the case: no length, a 2 GiB sparse file beside the model
            if "length" in entries:
                t.external_data.remove(entries["length"])
            with open(folder / "model.data", "r+b") as f:
                f.truncate(2 * 2 ** 30)
        elif how == "truncated":
            with open(folder / "model.data", "r+b") as f:
                f.truncate(max(0, (folder / "model.data").stat().st_size - rng.randrange(1, 64)))
        elif how == "dims" and t.dims:
            t.dims[rng.randrange(len(t.dims))] = rng.choice([0, 10 ** 6, 2 ** 31, 10 ** 12])
        onnx.save_model(m, path)
    return how, "", path


SCENARIOS = {"out_folder": out_folder, "os_fault": os_fault, "concurrent": concurrent}


def run_scenario(name: str, rng: random.Random, work: Path) -> tuple[str, float, str]:
    """(kind, seconds, message) of one scenario case in the fresh folder `work`."""
    start = time.perf_counter()
    try:
        kind, message = SCENARIOS[name](rng, work)
    except Exception as err:  # noqa: BLE001 - the harness itself failing is a finding too
        import traceback

        kind, message = "crash", "".join(traceback.format_exception(err))[-3000:]
    return kind, time.perf_counter() - start, message
