"""Builds a model with --weights blob and the fault-injection probe (probe.c.j2) once, then
answers batches of load attempts: what N_load_weights returned, and whether the weights in
use afterwards still give the outputs of the good blob."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import jinja2
import numpy as np

from codegen.compiler import compile_model
from codegen.emit.blob_sign import sign_build
from codegen.emit.render import write_files
from codegen.ir.types import C_TYPES, np_dtype
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.toolchain import compile_c

_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent)),
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                          keep_trailing_newline=True)


@dataclass(frozen=True)
class _IO:
    cname: str
    ctype: str
    elements: int


def build_blob_model(model: Path, work: Path, name: str = "m", target: str = "host",
                     sign_key: bytes | None = None) -> dict:
    """Compile `model` with --weights blob into `work` (signed with `sign_key`); returns the manifest."""
    result = compile_model(model, CompileOptions(load_target(target), name=name, weights="blob"))
    files = result.files if sign_key is None else sign_build(result.files, result.manifest, name, sign_key)
    work.mkdir(parents=True, exist_ok=True)
    write_files(files, work)
    return result.manifest


SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g")


class Probe:
    """`sign_key`: a signed build; `cflags`, `sources`: e.g. a signature hook and its file;
    `sanitize`: built with ASan and UBSan."""

    def __init__(self, model: Path, work: Path, name: str = "m", sign_key: bytes | None = None,
                 cflags: tuple[str, ...] = (), sources: tuple[Path, ...] = (), sanitize: bool = False):
        self.manifest = build_blob_model(model, work, name, sign_key=sign_key)
        self.work, self.name = work, name
        self.blob = work / self.manifest["weights"]["blob_file"]
        self.size = self.blob.stat().st_size

        def io(entry: dict) -> _IO:
            return _IO(entry["c_name"], C_TYPES[entry["dtype"]], int(np.prod(entry["shape"], dtype=np.int64)))

        outputs = [io(e) for e in self.manifest["outputs"]]
        out_bytes = sum(o.elements * np_dtype(e["dtype"]).itemsize
                        for o, e in zip(outputs, self.manifest["outputs"]))
        source = _ENV.get_template("probe.c.j2").render(m={
            "name": name, "inputs": [io(e) for e in self.manifest["inputs"]], "outputs": outputs,
            "output_bytes": out_bytes})
        (work / "probe.c").write_text(source)
        self.exe = work / "probe"  # blob mode: N.c is the only generated source
        extra = list(SANITIZE) if sanitize else []
        compile_c("gcc", [work / f"{name}.c", work / "probe.c", *sources], self.exe,
                  ["-O2", "-I", str(work), *cflags, *extra], ["-lm", *extra], work)

    def run(self, commands: list[str]) -> tuple[dict[str, str], list[tuple[int, int]]]:
        """The probe's first lines (noweights, load, crc) and one (code, same) per command."""
        # The probe keeps its test buffers to the end: leaks of the harness are not findings.
        env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"}
        proc = subprocess.run([str(self.exe), str(self.blob)], input="".join(c + "\n" for c in commands),
                              capture_output=True, text=True, cwd=self.work, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        head = dict(line.split(" ", 1) for line in lines[:3])
        answers = [tuple(int(v) for v in line.split()) for line in lines[3:]]
        assert len(answers) == len(commands)
        return head, answers
