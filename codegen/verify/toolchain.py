"""Compiler invocations: the strict flags every generated file must pass."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from codegen.errors import KilnError

# DESIGN.md's contract for generated C.
STRICT_FLAGS = ("-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wconversion",
                "-Wdouble-promotion", "-Wshadow")
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g")


class ToolchainError(Exception):
    """The generated code did not build: a bug in Kiln, reported with the compiler's output."""


def compile_c(cc: str, sources: list[Path], output: Path, cflags: list[str], ldlibs: list[str],
              cwd: Path) -> None:
    if shutil.which(cc) is None:
        package = f"gcc-{cc[:-4]}" if cc.endswith("-gcc") else cc  # Debian's name of a GCC cross compiler
        raise KilnError(f"C compiler '{cc}' not found; install it (Debian: apt-get install {package})")
    cmd = [cc, *STRICT_FLAGS, *cflags, "-I", str(cwd), *[str(s) for s in sources], "-o", str(output), *ldlibs]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError(f"{' '.join(cmd)}\n{proc.stderr[-8000:]}")
