"""Run generated code on a Cortex-A target: a statically linked AArch64 Linux executable (the
generated model and the host harness, templates/harness/host_main.c.j2) built with the
target's cross compiler, run under qemu-aarch64 (user-mode emulation: the harness reads and
writes its sample files through QEMU's Linux system calls, as on the host).

`kiln profile` runs the same executable under the counting plugin, with
boards/cortex_a/kiln_profile.h forced in (an A64 marker before and after each inference and
after each kernel call). The count covers the guest's instructions only, C library included,
so only the differences between markers are reported.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from codegen.emit.render import model_sources
from codegen.errors import KilnError
from codegen.resources import BOARDS
from codegen.targets import Target
from codegen.verify import host
from codegen.verify.firmware import Sizes, elf_sizes, tool
from codegen.verify.toolchain import compile_c

QEMU_USER = "qemu-aarch64"
CORTEX_A = BOARDS / "cortex_a"
# kiln_profile.h forced in: a marker instruction after each kernel call (`kiln profile`)
PROFILE_FLAGS = ["-I", str(CORTEX_A), "-include", "kiln_profile.h"]


def missing_tools(target: Target) -> str | None:
    """Why code for `target` cannot be built and run here (with the Debian package), or None."""
    if shutil.which(target.cc) is None:
        return f"C compiler '{target.cc}' not found (Debian packages gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)"
    if shutil.which(QEMU_USER) is None:
        return f"'{QEMU_USER}' not found (Debian package qemu-user)"
    return None


def _check_tools(target: Target) -> None:
    reason = missing_tools(target)
    if reason:
        raise KilnError(reason)


def launcher(target: Target, plugin: list[str] | None = None) -> tuple[str, ...]:
    """The qemu-aarch64 command line before the executable."""
    cmd = [QEMU_USER]
    if target.qemu_cpu:
        cmd += ["-cpu", target.qemu_cpu]
    if plugin:
        cmd += ["-plugin", ",".join(plugin)]
    return tuple(cmd)


def build_executable(files: dict[str, str], name: str, target: Target, work: Path, *,
                     profile: bool = False) -> tuple[Path, Sizes]:
    """Write the generated files and the harness into `work` and build `work/<name>_aarch64`
    with the target's compiler, flags and link flags; also the sizes of the model's objects."""
    _check_tools(target)
    harness = host.write_with_harness(files, name, work)
    flags = list(target.cflags) + (PROFILE_FLAGS if profile else [])
    objs = []
    for src in model_sources(files, name):
        obj = work / (Path(src).stem + ".o")
        compile_c(target.cc, [work / src], obj, [*flags, "-c"], [], work)
        objs.append(obj)
    exe = work / f"{name}_aarch64"
    compile_c(target.cc, [*objs, harness], exe, [*flags, *target.ldflags], ["-lm"], work)
    return exe, elf_sizes(tool(target, "size"), objs, work)


def run_generated(files: dict[str, str], name: str, samples: list[dict[str, np.ndarray]], target: Target
                  ) -> list[dict[str, np.ndarray]]:
    """Build the generated files for the target, run them under qemu-aarch64 on `samples`,
    and return the outputs of each sample by graph output name."""
    manifest = json.loads(files[f"{name}.manifest.json"])
    with tempfile.TemporaryDirectory(prefix="kiln-qemu-user-") as tmp:
        work = Path(tmp)
        exe, _ = build_executable(files, name, target, work)
        return host.run_samples(exe, manifest, samples, work, launcher=launcher(target))
