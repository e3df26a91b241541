"""Firmware for an emulated Cortex-M board: the generated model, a harness with the samples
linked in, the board's startup code and a linker script generated from the board's data.

The generated files are compiled with DESIGN.md's strict flags and the target's flags, exactly
as a user's build would; the harness and startup (boards/cortex_m/) are test scaffolding.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import jinja2
import numpy as np

from codegen.emit.render import harness_layout, length_param, model_sources, write_generated
from codegen.errors import KilnError
from codegen.ir.types import C_TYPES, np_dtype
from codegen.lower.context import c_identifier
from codegen.resources import BOARDS, TEMPLATES
from codegen.targets import Target
from codegen.targets.boards import Board, load_board
from codegen.verify.host import actual_tensor
from codegen.verify.toolchain import STRICT_FLAGS, ToolchainError

CORTEX_M = BOARDS / "cortex_m"
OUTPUT_FILE = "outputs.bin"  # written by the firmware on the host through semihosting
SAMPLES_FILE = "samples.bin"
SAMPLE_ALIGN = 16  # every input of a sample starts at a multiple of this
# Firmware-only flags: unused kernels and constants are dropped at link time.
SECTION_FLAGS = ("-ffunction-sections", "-fdata-sections")

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader([str(TEMPLATES), str(BOARDS)]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)


@dataclass(frozen=True)
class HarnessIO:
    name: str
    cname: str
    ctype: str
    dtype: str
    shape: tuple[int, ...]
    elements: int
    offset: int  # byte offset inside a sample (inputs only)
    # an output with a data-dependent length (codegen/ops/bounded.py): its manifest entry and
    # the harness variable receiving the length; None otherwise
    bounded: dict | None = None
    length_cname: str | None = None


@dataclass(frozen=True)
class HarnessCtx:
    name: str
    board: str
    count: int
    sample_bytes: int
    inputs: tuple[HarnessIO, ...]
    outputs: tuple[HarnessIO, ...]
    output_file: str = OUTPUT_FILE
    samples_file: str = SAMPLES_FILE
    blob_file: str | None = None  # --weights blob: linked in and loaded before the first sample
    guard: str = ""  # the model's macro prefix (N_ARENA_SIZE, ...)
    caller_arena: bool = False  # --arena caller: the harness provides the arena (N_init)
    io_in_arena: bool = False  # --io-in-arena: samples copied to N_input_k(), outputs read at N_output_k()


@dataclass(frozen=True)
class Sizes:
    """Bytes by kind, from the sections of an ELF file (arm-none-eabi-size -A)."""

    text: int
    rodata: int
    data: int
    bss: int

    @property
    def flash(self) -> int:
        return self.text + self.rodata + self.data

    @property
    def ram(self) -> int:
        return self.data + self.bss


@dataclass(frozen=True)
class Firmware:
    elf: Path
    board: Board
    harness: HarnessCtx
    model_sizes: Sizes  # the generated code alone (model .o files)
    firmware_sizes: Sizes  # the whole image, harness and startup included (samples excluded)


def board_of(target: Target) -> Board:
    if target.board is None:
        raise KilnError(f"target '{target.name}' has no emulated board to run on")
    return load_board(target.board)


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def harness_context(manifest: dict, board: Board, count: int) -> HarnessCtx:
    def io(entry: dict, offset: int) -> HarnessIO:
        shape = tuple(int(d) for d in entry["shape"])
        return HarnessIO(entry["name"], entry["c_name"], C_TYPES[entry["dtype"]], entry["dtype"], shape,
                         int(np.prod(shape, dtype=np.int64)), offset, entry if "length_axis" in entry else None,
                         length_param(entry["c_name"]) if "length_axis" in entry else None)

    layout = harness_layout(manifest)
    inputs, offset = [], 0
    for entry in manifest["inputs"]:
        spec = io(entry, offset)
        inputs.append(spec)
        offset = _align(offset + spec.elements * np_dtype(spec.dtype).itemsize, SAMPLE_ALIGN)
    return HarnessCtx(name=manifest["name"], board=board.name, count=count, sample_bytes=max(offset, SAMPLE_ALIGN),
                      inputs=tuple(inputs), outputs=tuple(io(e, 0) for e in manifest["outputs"]),
                      blob_file=manifest.get("weights", {}).get("blob_file"),
                      guard=c_identifier(manifest["name"]).upper(), caller_arena=layout.caller_arena,
                      io_in_arena=layout.io_in_arena)


def samples_blob(h: HarnessCtx, samples: list[dict[str, np.ndarray]]) -> bytes:
    """The samples as the harness reads them: inputs at their offsets, each sample padded."""
    blob = bytearray(h.sample_bytes * len(samples))
    for k, sample in enumerate(samples):
        for io in h.inputs:
            arr = np.asarray(sample[io.name]).astype(np_dtype(io.dtype))
            if arr.size != io.elements:
                raise KilnError(f"input '{io.name}' has {arr.size} elements, the model takes shape {list(io.shape)}")
            raw = np.ascontiguousarray(arr).tobytes()
            start = k * h.sample_bytes + io.offset
            blob[start:start + len(raw)] = raw
    return bytes(blob)


def read_outputs(raw: bytes, h: HarnessCtx, count: int) -> list[dict[str, np.ndarray]]:
    results, pos = [], 0
    for _ in range(count):
        out = {}
        for io in h.outputs:
            dt = np_dtype(io.dtype)
            if pos + io.elements * dt.itemsize > len(raw):
                raise RuntimeError(f"the firmware wrote {len(raw)} bytes of outputs, fewer than expected")
            out[io.name] = np.frombuffer(raw, dt, io.elements, pos).reshape(io.shape).copy()
            pos += io.elements * dt.itemsize
        for io in h.outputs:  # the actual lengths of the bounded outputs follow them
            if io.bounded is not None:
                shape = list(io.shape)
                shape[io.bounded["length_axis"]] = int(np.frombuffer(raw[pos:pos + 4], np.int32)[0])
                out[io.name] = actual_tensor(out[io.name].reshape(-1), shape, io.bounded)
                pos += 4
        results.append(out)
    return results


def tool(target: Target, name: str) -> str:
    """A binutils program beside the target's compiler: arm-none-eabi-gcc -> arm-none-eabi-size."""
    cc = target.cc
    return cc[: -len("gcc")] + name if cc.endswith("gcc") else name


def _run(cmd: list[str], cwd: Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError(f"{' '.join(cmd)}\n{proc.stderr[-8000:]}")
    return proc.stdout


def _link(cmd: list[str], cwd: Path, board: Board) -> None:
    """Link; a memory region overflow is the user's model not fitting the board: one clear line."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode == 0:
        return
    overflow = re.findall(r"region `(\w+)' overflowed by (\d+) bytes", proc.stderr)
    if overflow:
        what = ", ".join(f"{region} by {int(n):,} B" for region, n in overflow)
        raise KilnError(f"the firmware does not fit board '{board.name}': {what} over "
                        f"(flash {board.flash.length:,} B, RAM {board.ram.length:,} B)")
    raise ToolchainError(f"{' '.join(cmd)}\n{proc.stderr[-8000:]}")


def elf_sizes(size_tool: str, paths: list[Path], cwd: Path) -> Sizes:
    """Sum of section sizes by kind over object files or an image (SysV format of `size`)."""
    totals = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    kinds = ((".text", "text"), (".vectors", "text"), (".ARM.ex", "text"), (".rodata", "rodata"),
             (".data", "data"), (".bss", "bss"), (".stack", None), (".kiln_samples", None),
             (".kiln_weights", None))  # a --weights blob: its own flash slot, reported on its own
    for line in _run([size_tool, "-A", *[str(p) for p in paths]], cwd).splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[1].isdigit():
            continue
        for prefix, kind in kinds:
            if parts[0].startswith(prefix):
                if kind is not None:
                    totals[kind] += int(parts[1])
                break
    return Sizes(**totals)


def _compile_object(base: list[str], src: str, work: Path) -> Path:
    """`src` compiled in `work` with the strict flags; the object file (named by its stem, as
    the size report expects)."""
    obj = work / (Path(src).stem + ".o")
    _run([*base, *STRICT_FLAGS, "-c", src, "-o", str(obj)], work)
    return obj


def build_firmware(files: dict[str, str], name: str, target: Target, samples: list[dict[str, np.ndarray]],
                   work: Path, *, profile: bool = False, cflags: tuple[str, ...] = (),
                   link_script: Callable[[str], str] | None = None) -> Firmware:
    """Write everything into `work` and build `work/<name>.elf` for the target's board.

    With `profile`, kiln_profile.h is forced into the model and the harness, turning
    KILN_PROFILE_MARK into the marker the counting plugin looks for. `cflags` are added to
    every compilation (a user's -D, such as KILN_ARENA_SECTION); `link_script` edits the
    board's linker script text (a section of the user's placed in a region).
    """
    board = board_of(target)
    if shutil.which(target.cc) is None:
        raise KilnError(f"C compiler '{target.cc}' not found; install it (Debian: apt-get install "
                        f"gcc-arm-none-eabi libnewlib-arm-none-eabi)")
    manifest = json.loads(files[f"{name}.manifest.json"])
    h = harness_context(manifest, board, len(samples))
    for fname, content in files.items():
        write_generated(work / fname, content)
    (work / SAMPLES_FILE).write_bytes(samples_blob(h, samples))
    (work / "harness_main.c").write_text(_ENV.get_template("harness/cortex_m_main.c.j2").render(h=h))
    (work / "kiln_samples.S").write_text(_ENV.get_template("harness/cortex_m_samples.S.j2").render(h=h))
    script = _ENV.get_template("cortex_m/link.ld.j2").render(b=board)
    (work / "link.ld").write_text(link_script(script) if link_script is not None else script)

    cc = target.cc
    includes = ["-I", str(work), "-I", str(CORTEX_M)]
    profiling = ["-include", "kiln_profile.h"] if profile else []
    base = [cc, *target.cflags, *SECTION_FLAGS, *includes, *profiling, *cflags]
    model_objs = [_compile_object(base, src, work) for src in model_sources(files, name)]
    support_objs = [_compile_object(base, src, work)
                    for src in ("harness_main.c", str(CORTEX_M / "startup.c"), "kiln_samples.S")]
    elf = work / f"{name}.elf"
    _link([cc, *target.cflags, *target.ldflags, "-nostartfiles", "-T", "link.ld", "-Wl,--gc-sections",
           *[str(o) for o in model_objs + support_objs], "-lm", "-o", str(elf)], work, board)
    size = tool(target, "size")
    return Firmware(elf, board, h, elf_sizes(size, model_objs, work), elf_sizes(size, [elf], work))
