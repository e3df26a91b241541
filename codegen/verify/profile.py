"""`kiln profile`: exact instruction counts per kernel call on an emulated Cortex-M board.

The firmware is built with kiln_profile.h forced in, so that a marker instruction follows the
harness's call into the model, each kernel call, and the return; QEMU runs it with the
counting plugin (codegen/verify/plugin/insn_count.c, built here with the host's gcc), which
writes the instruction count at each marker. Counts are exact and repeatable for a given
toolchain and QEMU; wall time under QEMU measures nothing and is not reported.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from codegen import progress
from codegen.compiler import BuildResult, compile_model, with_numerics
from codegen.errors import KilnError
from codegen.kernels.select import variant_for_name
from codegen.options import CompileOptions
from codegen.targets import Target
from codegen.verify.firmware import Sizes, build_firmware
from codegen.verify import hot_loops, qemu_user
from codegen.verify.qemu import FirmwareError, run_firmware
from codegen.verify.samples import random_samples

PLUGIN_SOURCE = Path(__file__).resolve().parent / "plugin" / "insn_count.c"
MARKS_FILE = "marks.txt"


def build_plugin(out_dir: Path, cc: str = "gcc") -> Path:
    """Compile the counting plugin into `out_dir` as a shared object; its path."""
    if shutil.which(cc) is None:
        raise KilnError(f"the instruction-counting plugin needs the host C compiler '{cc}'")
    so = out_dir / "insn_count.so"
    cmd = [cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(so), str(PLUGIN_SOURCE)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or ["no message"]
        first_error = next((line for line in lines if "error" in line), lines[-1])  # one line, not the log
        raise KilnError(f"cannot build the counting plugin ({PLUGIN_SOURCE.name}): {first_error.strip()}")
    return so


@dataclass(frozen=True)
class CallProfile:
    index: int
    call: str  # C name of the call in the generated code
    kernel: str
    variant: str  # template variant the kernel came from ("reference", "cortex_m_dsp", ...)
    nodes: tuple[str, ...]
    instructions: tuple[int, ...]  # one count per sample


@dataclass(frozen=True)
class Profile:
    target: str
    board: str
    samples: int
    calls: tuple[CallProfile, ...]
    totals: tuple[int, ...]  # per sample: call into the model to its return
    model_sizes: Sizes
    firmware_sizes: Sizes
    stack_bytes: int | None
    arena_bytes: int
    weights_bytes: int
    flash_budget: int
    ram_budget: int
    stack_reserved: int
    hot_loops: dict = field(default_factory=dict)  # kernel -> hot_loops.HotLoop (Cortex-A with llvm-mca)


def split_marks(text: str, calls: int, samples: int) -> list[list[int]]:
    """Counts at each marker, one list of calls + 2 per sample (harness, each call, harness)."""
    marks = [int(line) for line in text.splitlines() if line.strip().isdigit()]
    per = calls + 2
    if len(marks) != per * samples:
        raise FirmwareError(f"the counting plugin saw {len(marks)} markers, expected {per * samples} "
                            f"({samples} inference(s) of {calls} kernel calls)")
    return [marks[k * per:(k + 1) * per] for k in range(samples)]


def call_profiles(groups: list[dict], target: Target, per_sample: list[list[int]]) -> tuple[CallProfile, ...]:
    """The instructions of each kernel call (`groups`: the manifest's fusion groups) from the
    counts at the markers of each sample (split_marks)."""
    return tuple(
        CallProfile(index=k, call=g["call"], kernel=g["kernel"],
                    variant=variant_for_name(g["kernel"], target.variants),
                    nodes=tuple(g["nodes"]),
                    instructions=tuple(m[k + 1] - m[k] for m in per_sample))
        for k, g in enumerate(groups))


def profile_generated(files: dict[str, str], name: str, manifest: dict, target: Target,
                      samples: list[dict[str, np.ndarray]], *, plugin: Path | None = None) -> Profile:
    """Run the generated code on the samples under the counting plugin."""
    groups = manifest["fusion_groups"]
    with tempfile.TemporaryDirectory(prefix="kiln-profile-") as tmp:
        work = Path(tmp)
        fw = build_firmware(files, name, target, samples, work, profile=True)
        so = plugin if plugin is not None else build_plugin(work)
        run = run_firmware(fw, work, plugin=[str(so), f"out={work / MARKS_FILE}"])
        per_sample = split_marks((work / MARKS_FILE).read_text(), len(groups), len(samples))
    calls = call_profiles(groups, target, per_sample)
    return Profile(target=target.name, board=fw.board.name, samples=len(samples), calls=calls,
                   totals=tuple(m[-1] - m[0] for m in per_sample), model_sizes=fw.model_sizes,
                   firmware_sizes=fw.firmware_sizes, stack_bytes=run.stack_bytes,
                   arena_bytes=int(manifest["arena_bytes"]), weights_bytes=int(manifest["weights_bytes"]),
                   flash_budget=fw.board.flash_budget, ram_budget=fw.board.ram_budget,
                   stack_reserved=fw.board.stack_bytes)


def profile_generated_user(files: dict[str, str], name: str, manifest: dict, target: Target,
                      samples: list[dict[str, np.ndarray]], *, plugin: Path | None = None):
    """Run the generated code for a Cortex-A target as a static AArch64 executable under
    qemu-aarch64 and the counting plugin: a `Profile` (no board budgets and no stack measure:
    those fields are 0 / None)."""
    groups = manifest["fusion_groups"]
    with tempfile.TemporaryDirectory(prefix="kiln-profile-") as tmp:
        work = Path(tmp)
        exe, model_sizes = qemu_user.build_executable(files, name, target, work, profile=True)
        so = plugin if plugin is not None else build_plugin(work)
        cmd = qemu_user.launcher(target, [str(so), f"out={work / MARKS_FILE}"])
        qemu_user.host.run_samples(exe, manifest, samples, work, launcher=cmd)
        per_sample = split_marks((work / MARKS_FILE).read_text(), len(groups), len(samples))
        exe_sizes = qemu_user.elf_sizes(qemu_user.tool(target, "size"), [exe], work)
        loops = hot_loops.kernel_hot_loops(work / f"{name}.c", target, [g["kernel"] for g in groups], work,
                                           qemu_user.PROFILE_FLAGS)
    return Profile(target=target.name, board=" ".join(qemu_user.launcher(target)), samples=len(samples),
                   calls=call_profiles(groups, target, per_sample),
                   totals=tuple(m[-1] - m[0] for m in per_sample), model_sizes=model_sizes,
                   firmware_sizes=exe_sizes, stack_bytes=None, arena_bytes=int(manifest["arena_bytes"]),
                   weights_bytes=int(manifest["weights_bytes"]), flash_budget=0, ram_budget=0, stack_reserved=0,
                   hot_loops=loops)


def profile_model(model: Path, options: CompileOptions, *, samples: int = 1, seed: int = 0,
                  plugin: Path | None = None, build=None) -> Profile:
    """`build`: the model compiled with `options` already (the CLI prints what --ram-limit took)."""
    if options.target.runner not in ("qemu-system", "qemu-user"):
        raise KilnError(f"kiln profile counts instructions on an emulated board; target '{options.target.name}' "
                        f"has none (use a cortex-m or cortex-a target)")
    build = build if build is not None else compile_model(model, options)
    # the kernels' variants as the build chose them (--numerics onnxruntime puts its own first)
    return profile_build(build, with_numerics(options).target, samples=samples, seed=seed, plugin=plugin)


def profile_build(build: BuildResult, target: Target, *, samples: int = 1, seed: int = 0,
                  plugin: Path | None = None) -> Profile:
    """Count the instructions of a compiled model on random inputs (`kiln profile`, `kiln analyze --profile`)."""
    if target.runner not in ("qemu-system", "qemu-user"):
        raise KilnError(f"counting instructions needs an emulated board; target '{target.name}' has none "
                        f"(use a cortex-m or cortex-a target)")
    inputs = random_samples(build.manifest["inputs"], samples, seed)
    with progress.step("building the firmware and counting its instructions in QEMU"):
        if target.runner == "qemu-user":
            return profile_generated_user(build.files, build.name, build.manifest, target, inputs, plugin=plugin)
        return profile_generated(build.files, build.name, build.manifest, target, inputs, plugin=plugin)


def _count(values: tuple[int, ...]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:,}" if lo == hi else f"{lo:,}..{hi:,}"


def estimated_cycles(p: Profile) -> dict[int, float]:
    """Per call with a hot-loop estimate: its instructions (fewest over the samples) at the
    loop's instructions per cycle."""
    return {c.index: min(c.instructions) / p.hot_loops[c.kernel].ipc for c in p.calls
            if c.kernel in p.hot_loops and p.hot_loops[c.kernel].ipc}


def hot_loop_lines(p: Profile) -> list[str]:
    """The throughput estimate (codegen/verify/hot_loops.py), one line per kernel."""
    if not p.hot_loops:
        return []
    est = estimated_cycles(p)
    lines = [f"  hot loops (llvm-mca -mcpu={p.target}): instructions per cycle, and the calls' "
             f"instructions at that rate: about {sum(est.values()):,.0f} cycles for the kernels with a loop"]
    for kernel, loop in sorted(p.hot_loops.items()):
        cycles = sum(v for c in p.calls if c.kernel == kernel for v in [est.get(c.index, 0.0)])
        lines.append(f"  {'':>3}  {kernel[:40]:<40} {loop.instructions:>4} insns/iteration, "
                     f"{loop.cycles:>6.1f} cycles, IPC {loop.ipc:4.2f}, est. {cycles:>12,.0f} cycles")
    return lines


def format_profile(p: Profile, model_name: str) -> str:
    """The report `kiln profile` prints."""
    total = min(p.totals)
    lines = [f"kiln profile: {model_name} on {p.target} (board {p.board}), {p.samples} inference(s), "
             f"exact instruction counts",
             f"  {'#':>3}  {'call':<28} {'kernel':<24} {'variant':<14} {'instructions':>16} {'share':>6}"]
    for c in p.calls:
        share = 100.0 * min(c.instructions) / total if total else 0.0
        lines.append(f"  {c.index:>3}  {c.call[:28]:<28} {c.kernel[:24]:<24} {c.variant[:14]:<14} "
                     f"{_count(c.instructions):>16} {share:>5.1f}%")
    kernels = tuple(sum(c.instructions[k] for c in p.calls) for k in range(p.samples))
    lines.append(f"  {'':>3}  {'kernels':<68} {_count(kernels):>16}")
    lines.append(f"  {'':>3}  {'total (call to return of the model)':<68} {_count(p.totals):>16}")
    lines += hot_loop_lines(p)
    m, f = p.model_sizes, p.firmware_sizes
    lines.append(f"  model: flash {m.flash:,} B (text {m.text:,}, rodata {m.rodata:,}, data {m.data:,}; "
                 f"weights {p.weights_bytes:,}), RAM {m.ram:,} B (data {m.data:,}, bss {m.bss:,}; "
                 f"arena {p.arena_bytes:,})")
    if not p.flash_budget:  # a Linux executable (qemu-user): no board budget, no stack measure
        lines.append(f"  executable (harness and C library included): text {f.text:,} B, rodata {f.rodata:,} B, "
                     f"data {f.data:,} B, bss {f.bss:,} B")
        return "\n".join(lines) + "\n"
    stack = f"stack used {p.stack_bytes:,} B of {p.stack_reserved:,}" if p.stack_bytes is not None else "stack unknown"
    lines.append(f"  firmware (harness and startup included): flash {f.flash:,} B of {p.flash_budget:,}, "
                 f"RAM {f.ram:,} B + {stack}, budget {p.ram_budget:,}")
    return "\n".join(lines) + "\n"
