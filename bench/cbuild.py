"""Build and run a code generator's C output the same way for every tool.

One adapter per tool (bench/harness/*_adapter.c.j2) gives the model a common entry point,
`int bench_run(const void *in, void *out)`; everything else is shared:
- the host driver (harness/host_main.c): outputs, stack and heap high-water marks, and one
  inference under callgrind;
- a shared library of model + adapter for the in-process latency comparison;
- Cortex-M firmware (harness/m4_main.c.j2 with the board's startup code and linker script)
  run in QEMU with Kiln's instruction-counting plugin, for peers (Kiln's own firmware is
  `kiln profile`'s, codegen/verify/profile.py).
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import jinja2
import numpy as np

from bench.config import HARNESS, HOST_CC, HOST_CFLAGS
from codegen.resources import BOARDS, TEMPLATES
from codegen.targets import Target
from codegen.targets.boards import Board
from codegen.verify.firmware import CORTEX_M, SECTION_FLAGS, Sizes, elf_sizes, tool
from codegen.verify.qemu import qemu_command
from codegen.verify.toolchain import STRICT_FLAGS

WRAP = "-Wl,--wrap=malloc,--wrap=free,--wrap=calloc,--wrap=realloc"
M4_STACK_BYTES = 256 * 1024  # the firmware's stack, painted and measured (the board's 16 KiB is Kiln's)
SAMPLE_ALIGN = 16
RUN_TIMEOUT_S = 900

_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader([str(HARNESS), str(TEMPLATES), str(BOARDS)]),
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                          keep_trailing_newline=True, autoescape=False)


class BuildError(RuntimeError):
    pass


@dataclass(frozen=True)
class CModel:
    """A tool's generated C for one model, in `work`, with the adapter to reach it."""

    tool: str
    work: Path
    sources: tuple[str, ...]  # the generated .c files (names inside work)
    adapter: str  # the adapter .c file (inside work)
    strict: bool  # compile the generated files with DESIGN.md's -Werror flags (Kiln's contract)
    input_bytes: int
    output_bytes: int


def render(template: str, path: Path, **ctx) -> None:
    path.write_text(_ENV.get_template(template).render(**ctx))


def run(cmd: list[str], cwd: Path, timeout: float = RUN_TIMEOUT_S,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        raise BuildError(f"{Path(str(cmd[0])).name} did not finish within {timeout:g} s") from None
    if proc.returncode != 0:
        raise BuildError(f"{Path(str(cmd[0])).name} failed (exit {proc.returncode}): "
                         f"{(proc.stderr or proc.stdout).strip()[-1500:]}")
    return proc


def _objects(cm: CModel, cc: str, flags: list[str], out: Path) -> list[Path]:
    out.mkdir(exist_ok=True)
    objs = []
    for src in (*cm.sources, cm.adapter):
        obj = out / (Path(src).stem + ".o")
        extra = list(STRICT_FLAGS) if cm.strict and src != cm.adapter else []
        run([cc, *extra, *flags, "-I", cm.work, "-c", cm.work / src, "-o", obj], cm.work)
        objs.append(obj)
    return objs


# ---- host ------------------------------------------------------------------------------------

def build_host_driver(cm: CModel) -> Path:
    objs = _objects(cm, HOST_CC, list(HOST_CFLAGS), cm.work / "host")
    exe = cm.work / "host" / "driver"
    run([HOST_CC, *HOST_CFLAGS, HARNESS / "host_main.c", HARNESS / "heap_wrap.c", *objs, WRAP, "-lm",
         "-o", exe], cm.work)
    return exe


def build_shared(cm: CModel, cflags: tuple[str, ...] = HOST_CFLAGS) -> Path:
    """Model + adapter as a shared library (-fPIC, otherwise `cflags`: the shared host flags
    unless a benchmark asks for others) for ctypes."""
    objs = _objects(cm, HOST_CC, [*cflags, "-fPIC"], cm.work / "pic")
    so = cm.work / "pic" / "libmodel.so"
    run([HOST_CC, "-shared", *objs, "-lm", "-o", so], cm.work)
    return so


def _marks(text: str, name: str) -> int | None:
    m = re.search(rf"{name} (\d+)", text)
    return int(m.group(1)) if m else None


def run_host_driver(exe: Path, samples: list[bytes], output_bytes: int) -> tuple[list[bytes], int, int]:
    """Outputs of each sample, stack bytes, heap bytes (peak requested)."""
    work = exe.parent
    (work / "inputs.bin").write_bytes(b"".join(samples))
    proc = run([exe, "run", "inputs.bin", "outputs.bin", str(len(samples))], work)
    raw = (work / "outputs.bin").read_bytes()
    outs = [raw[k * output_bytes:(k + 1) * output_bytes] for k in range(len(samples))]
    return outs, _marks(proc.stdout, "bench-stack-bytes") or 0, _marks(proc.stdout, "bench-heap-bytes") or 0


def callgrind_total(cmd: list[str], cwd: Path, out_file: Path) -> int:
    """Instructions callgrind collected (the program toggles collection around its region).
    PYTHONHASHSEED is fixed so that Python-driven runs repeat their dictionary layouts."""
    out_file.unlink(missing_ok=True)
    run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--instr-atstart=no",
         f"--callgrind-out-file={out_file}", *cmd], cwd, env={**os.environ, "PYTHONHASHSEED": "0"})
    text = out_file.read_text()
    m = re.search(r"^totals:\s+(\d+)", text, re.M) or re.search(r"^summary:\s+(\d+)", text, re.M)
    if m is None:
        raise BuildError(f"no totals in {out_file.name}")
    return int(m.group(1))


def callgrind_driver(exe: Path, sample: bytes) -> int:
    work = exe.parent
    (work / "cg_input.bin").write_bytes(sample)
    return callgrind_total([exe, "callgrind", "cg_input.bin", "cg_output.bin", "1"], work, work / "callgrind.out")


# ---- Cortex-M ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class M4Run:
    instructions: tuple[int, ...]  # per sample, call to return of bench_run
    outputs: list[bytes]
    stack_bytes: int | None
    heap_bytes: int | None
    model_sizes: Sizes  # the generated code (+ its adapter) alone
    image_sizes: Sizes  # the whole firmware: harness, startup, libc and libm included


def _sample_blob(samples: list[bytes]) -> tuple[bytes, int]:
    per = max(SAMPLE_ALIGN, -(-max(len(s) for s in samples) // SAMPLE_ALIGN) * SAMPLE_ALIGN)
    return b"".join(s.ljust(per, b"\0") for s in samples), per


def build_m4_firmware(cm: CModel, target: Target, board: Board, samples: list[bytes]) -> tuple[Path, Sizes, Sizes]:
    work = cm.work / "m4"
    work.mkdir(exist_ok=True)
    blob, per = _sample_blob(samples)
    (work / "samples.bin").write_bytes(blob)
    board = dataclasses.replace(board, stack_bytes=M4_STACK_BYTES)
    render("m4_main.c.j2", work / "bench_main.c", count=len(samples), sample_bytes=per,
           output_bytes=cm.output_bytes)
    render("harness/cortex_m_samples.S.j2", work / "samples.S",
           h=SimpleNamespace(samples_file="samples.bin", count=len(samples), sample_bytes=per, blob_file=None))
    if board.ext is None:
        raise BuildError(f"board {board.name} has no memory outside RAM for the heap pool")
    render("cortex_m/link.ld.j2", work / "link.ld", b=board)
    with open(work / "link.ld", "a") as f:
        f.write("\n" + (HARNESS / "m4_heap.ld").read_text())
    flags = [*target.cflags, "-std=c99", *SECTION_FLAGS]
    model_objs = _objects(cm, target.cc, flags, work)
    support = []
    for src in (work / "bench_main.c", HARNESS / "m4_sbrk.c", CORTEX_M / "startup.c", work / "samples.S"):
        obj = work / (src.stem + "_sup.o")
        run([target.cc, *flags, "-I", CORTEX_M, "-I", work,
             "-c", src, "-o", obj], work)
        support.append(obj)
    elf = work / "firmware.elf"
    run([target.cc, *target.cflags, *target.ldflags, "-nostartfiles", "-T", "link.ld", "-Wl,--gc-sections",
         *model_objs, *support, "-lm", "-o", elf], work)
    size = tool(target, "size")
    return elf, elf_sizes(size, model_objs, work), elf_sizes(size, [elf], work)


def run_m4(cm: CModel, target: Target, board: Board, plugin: Path, samples: list[bytes]) -> M4Run:
    elf, model_sizes, image_sizes = build_m4_firmware(cm, target, board, samples)
    work = elf.parent
    marks = work / "marks.txt"
    marks.unlink(missing_ok=True)
    proc = run(qemu_command(board, elf, [str(plugin), f"out={marks}"]), work)
    text = proc.stdout + proc.stderr
    if _marks(text, "bench-heap-failed"):
        raise BuildError("the firmware's 12 MiB heap (harness/m4_heap.ld) was too small for malloc")
    counts = [int(line) for line in marks.read_text().splitlines() if line.strip().isdigit()]
    if len(counts) != 2 * len(samples):
        raise BuildError(f"expected {2 * len(samples)} profiling markers, the plugin saw {len(counts)}")
    raw = (work / "outputs.bin").read_bytes()
    outs = [raw[k * cm.output_bytes:(k + 1) * cm.output_bytes] for k in range(len(samples))]
    return M4Run(tuple(counts[2 * k + 1] - counts[2 * k] for k in range(len(samples))), outs,
                 _marks(text, "kiln-stack-bytes"), _marks(text, "bench-heap-bytes"), model_sizes, image_sizes)


def as_bytes(arr: np.ndarray, dtype: np.dtype) -> bytes:
    return np.ascontiguousarray(np.asarray(arr).astype(dtype)).tobytes()
