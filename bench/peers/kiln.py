"""Kiln: the generated C for the host (reference kernels) and for the Cortex-M4F (mps2-an386).

Host: the generated files with the benchmark's driver (bench/cbuild.py), compiled with DESIGN.md's
strict flags plus the shared code-generation flags. Cortex-M4F: `kiln profile`'s firmware and
counting plugin (codegen/verify/profile.py), which report exact instructions, the model's
sections and the stack high-water mark.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from bench.cbuild import CModel, render
from codegen.compiler import BuildResult, compile_model
from codegen.ir.types import C_TYPES, np_dtype
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.profile import Profile, profile_generated


def compile_for(model: Path, target: str) -> BuildResult:
    return compile_model(model, CompileOptions(target=load_target(target)))


def io_bytes(entry: dict) -> int:
    return int(np.prod(entry["shape"], dtype=np.int64)) * np_dtype(entry["dtype"]).itemsize


def host_model(build: BuildResult, work: Path) -> CModel:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for fname, text in build.files.items():
        (work / fname).write_text(text)
    if len(build.manifest["inputs"]) != 1 or len(build.manifest["outputs"]) != 1:
        raise RuntimeError("the benchmark handles models with one input and one output")
    (inp,), (out,) = build.manifest["inputs"], build.manifest["outputs"]
    render("kiln_adapter.c.j2", work / "bench_adapter.c", name=build.name, input_bytes=io_bytes(inp),
           output_bytes=io_bytes(out), input_ctype=C_TYPES[inp["dtype"]], output_ctype=C_TYPES[out["dtype"]])
    sources = tuple(f for f in build.files if f.endswith(".c"))
    return CModel("kiln", work, sources, "bench_adapter.c", strict=True,
                  input_bytes=io_bytes(inp), output_bytes=io_bytes(out))


def profile_m4(build: BuildResult, sample: dict[str, np.ndarray], plugin: Path) -> Profile:
    target = load_target(build.manifest["target"])
    return profile_generated(build.files, build.name, build.manifest, target, [sample], plugin=plugin)
