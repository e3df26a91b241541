"""`kiln build --board B`: the model's sources made into a project for the board.

Beside the model files the project holds what makes it build and run on the board: for a
bare-metal Cortex-M board the startup code and a linker script generated from the board's memory
map (boards/cortex_m/), a main that runs the model once and prints its outputs
(templates/project/main.c.j2, boards/project/), and a Makefile (`make`, `make run`, `make flash`,
`make size`). A Linux board (Raspberry Pi 4) gets a statically linked executable instead.

When the board's toolchain is installed, the project is built once in a scratch folder with its
own Makefile before anything is written, and `make size`'s figures (text, rodata, data, bss,
stack) go into the manifest; a firmware over the board's budget fails with what it needs and
the budget. Without the toolchain the model's own figures (arena, weights, estimated code) are
checked and the manifest says the firmware was not measured.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from codegen import __version__, progress
from codegen.board_console import board_header_context, check_console
from codegen.budget import check_budget
from codegen.compiler import BuildResult
from codegen.emit.render import length_param, model_sources, write_generated
from codegen.errors import KilnError
from codegen.ir.types import C_TYPES
from codegen.resources import BOARDS
from codegen.targets import OPT_FLAG, Target
from codegen.targets.boards import Board
from codegen.verify.firmware import _ENV, CORTEX_M, elf_sizes, tool  # templates/ and boards/ share one loader
from codegen.verify.qemu import qemu_command
from codegen.verify.toolchain import ToolchainError

PROJECT_SUPPORT = BOARDS / "project"
MEASURE_TIMEOUT_S = 600


@dataclass(frozen=True)
class MainIO:
    cname: str
    ctype: str
    elements: int
    integer: bool  # the main prints the largest value of integer outputs only (no printf for floats)
    length_cname: str | None = None  # a data-dependent length (codegen/ops/bounded.py): its variable


@dataclass(frozen=True)
class ProjectCtx:
    kiln_version: str
    name: str
    guard: str
    board: str
    description: str
    target: str
    bare_metal: bool
    cc: str
    size: str
    objcopy: str
    cpu_flags: tuple[str, ...]  # the target's flags without the optimisation level
    opt: str  # -O2, -Os, ...
    ldflags: tuple[str, ...]
    support_srcs: tuple[str, ...]
    boot2: bool
    flash_budget: int
    ram_budget: int
    run_command: str | None
    run_where: str
    runner: str | None  # Linux boards: the command `make run` puts before the executable
    flash_command: str
    flash_image: str  # the make variable of the file the flash command takes: $(ELF), $(HEX), $(BIN)
    variables: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    inputs: tuple[MainIO, ...]
    outputs: tuple[MainIO, ...]
    blob_file: str | None  # --weights blob: the blob main.c loads (linked in by kiln_weights.S)
    console: str  # the Makefile's default CONSOLE: "uart" or "semihosting" (bare metal only)
    has_uart: bool  # the board file names a console UART
    uart_run_command: str | None  # `make run` with CONSOLE=uart in QEMU (the UART on QEMU's serial port)
    uart_exit: str  # the default UART_EXIT: "reset" (QEMU's boards end the run) or "halt" (real boards)
    calls: tuple[MainCall, ...]  # the model's kernel calls, for the cycles of `make PROFILE=1`


@dataclass(frozen=True)
class MainCall:
    call: str
    kernel: str


# The targets whose code each core runs: its own and those whose instruction set (and FPU) it
# includes (Armv6-M in Armv7-M in Armv7E-M in Armv8-M Mainline with DSP in Armv8.1-M; the
# Cortex-M7's double-precision FPU is not in the M33's or M55's). A core not listed runs its
# board's target only.
RUNS_TARGETS = {
    "cortex-m0": ("cortex-m0plus",),
    "cortex-m0plus": ("cortex-m0plus",),
    "cortex-m3": ("cortex-m0plus", "cortex-m3"),
    "cortex-m4": ("cortex-m0plus", "cortex-m3", "cortex-m4"),
    "cortex-m7": ("cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7"),
    "cortex-m33": ("cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m33"),
    "cortex-m55": ("cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m33", "cortex-m55"),
    "cortex-a72": ("cortex-a53", "cortex-a72"),  # Armv8.0-A (the A55 and A76 targets are Armv8.2-A)
}


def check_board_target(board: Board, target: Target) -> None:
    """The board's core runs the target's code: a Cortex-M target on a bare-metal board whose
    core includes the target's instruction set, a Cortex-A one on a Linux board likewise."""
    bare_metal_target = target.runner == "qemu-system"
    runs = RUNS_TARGETS.get(board.core, (board.target,))
    if bare_metal_target != (board.system == "bare-metal") or target.runner == "host" or target.name not in runs:
        raise KilnError(f"target '{target.name}' does not run on board '{board.name}' "
                        f"({board.description}; its target is {board.target})")


def _opt_flag(cflags: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    opts = [f for f in cflags if OPT_FLAG.fullmatch(f)]
    return tuple(f for f in cflags if f not in opts), (opts[-1] if opts else "-O2")


def _main_io(manifest: dict, key: str) -> tuple[MainIO, ...]:
    return tuple(MainIO(io["c_name"], C_TYPES[io["dtype"]], math.prod(int(d) for d in io["shape"]),
                        not io["dtype"].startswith("float"),
                        length_param(io["c_name"]) if "length_axis" in io else None) for io in manifest[key])


# `make run` with the UART console in QEMU: its serial port is the console (stdio with
# -nographic), the firmware ends with "kiln-exit <status>" and a reset request that -no-reboot
# turns into QEMU's exit; awk passes the text on and makes the status make's.
UART_RUN_FILTER = """awk '{ sub(/\\r$$/, ""); print } /^kiln-exit / { status = $$2 } END { exit (status == "" ? 1 : status) }'"""


def project_context(manifest: dict, board: Board, target: Target, console: str | None = None) -> ProjectCtx:
    bare_metal = board.system == "bare-metal"
    cpu_flags, opt = _opt_flag(target.cflags)
    flasher = board.flasher
    if flasher is None:
        raise KilnError(f"board '{board.name}' has no [flash] command", where=f"boards/{board.name}.toml")
    if bare_metal:
        ldflags = (*target.ldflags, "-nostartfiles", "-T", "link.ld", "-Wl,--gc-sections")
        run = " ".join(qemu_command(board, Path("$(ELF)"))) if board.qemu_machine else None
        where = f"in QEMU ({board.qemu_machine}), console on semihosting or its serial port (CONSOLE)"
        runner = None
    else:
        from codegen.verify.qemu_user import launcher

        ldflags = (*target.ldflags, "-Wl,--gc-sections")
        runner = " ".join(launcher(target))
        run, where = "$(RUNNER) $(ELF)", "under $(RUNNER) (on the board itself: make run RUNNER=)"
    image = next((v for v in ("$(HEX)", "$(BIN)") if v in flasher.command), "$(ELF)")
    return ProjectCtx(
        kiln_version=__version__, name=manifest["name"], guard=manifest["name"].upper(), board=board.name,
        description=board.description, target=target.name, bare_metal=bare_metal,
        cc=target.cc, size=tool(target, "size"), objcopy=tool(target, "objcopy"),
        cpu_flags=cpu_flags, opt=opt, ldflags=ldflags,
        support_srcs=("startup.c", "kiln_board.c") if bare_metal else (), boot2=board.boot2 is not None,
        flash_budget=board.flash_budget, ram_budget=board.ram_budget,
        run_command=run, run_where=where, runner=runner,
        flash_command=flasher.command, flash_image=image, variables=flasher.variables,
        notes=tuple(board.notes.splitlines()),
        inputs=_main_io(manifest, "inputs"), outputs=_main_io(manifest, "outputs"),
        blob_file=manifest.get("weights", {}).get("blob_file"),
        console=check_console(board, console) if bare_metal else "stdout", has_uart=board.uart is not None,
        uart_run_command=f"{run} -no-reboot | {UART_RUN_FILTER}" if run and bare_metal else None,
        uart_exit="reset" if board.qemu_machine else "halt",
        calls=tuple(MainCall(g["call"], g["kernel"]) for g in manifest["fusion_groups"]))


def project_files(build: BuildResult, board: Board, target: Target, console: str | None = None) -> dict[str, str]:
    """The files a --board build adds to the model's: Makefile, main.c, console, startup, linker script."""
    p = project_context(build.manifest, board, target, console)
    files = {
        "Makefile": _ENV.get_template("project/Makefile.j2").render(p=p),
        "main.c": _ENV.get_template("project/main.c.j2").render(p=p),
        "kiln_console.h": (PROJECT_SUPPORT / "kiln_console.h").read_text(),
        "kiln_input.S": (PROJECT_SUPPORT / "kiln_input.S").read_text(),
        "kiln_size.awk": (PROJECT_SUPPORT / "kiln_size.awk").read_text(),
    }
    if p.blob_file:
        files["kiln_weights.S"] = (PROJECT_SUPPORT / "kiln_weights.S").read_text()
    if p.bare_metal:
        files["startup.c"] = (CORTEX_M / "startup.c").read_text()
        files["kiln_semihost.h"] = (CORTEX_M / "kiln_semihost.h").read_text()
        files["link.ld"] = _ENV.get_template("cortex_m/link.ld.j2").render(b=board)
        header = board_header_context(board)
        files["kiln_board.h"] = _ENV.get_template("project/kiln_board.h.j2").render(b=header)
        files["kiln_board.c"] = _ENV.get_template("project/kiln_board.c.j2").render(b=header)
        files["kiln_cycles.h"] = (PROJECT_SUPPORT / "kiln_cycles.h").read_text()
        if board.uart is not None:
            files["kiln_uart.h"] = (CORTEX_M / "kiln_uart.h").read_text()
    clash = sorted(set(files) & set(build.files))
    if clash:
        raise KilnError(f"--name '{build.name}' gives a file the project needs itself ({clash[0]}); choose another name")
    return files


def missing_toolchain(target: Target) -> str | None:
    """Why the project cannot be built here, or None."""
    for program in ("make", target.cc, tool(target, "size")):
        if shutil.which(program) is None:
            return f"'{program}' not found"
    return None


def _over_budget(board: Board, text: str) -> KilnError | None:
    """The linker's region overflows as the user's error: what the firmware needs, and the budget."""
    budgets = {"FLASH": ("flash", board.flash_budget, board.flash), "RAM": ("RAM", board.ram_budget, board.ram)}
    needs = []
    for region, over in dict(re.findall(r"region `(\w+)' overflowed by (\d+) bytes", text)).items():
        if region in budgets:
            kind, budget, memory = budgets[region]
            need = memory.length + int(over)
            needs.append(f"{need} B of {kind}, budget is {budget} B: {need - budget} B over")
    return KilnError(f"the firmware for board '{board.name}' needs {'; and '.join(needs)}") if needs else None


def measure_project(files: dict[str, str | bytes], board: Board, target: Target, model_srcs: list[str]) -> dict:
    """Build the project in a scratch folder with its own Makefile: `make size`'s figures, and
    the sizes of the objects of `model_srcs` (the generated model alone)."""
    with tempfile.TemporaryDirectory(prefix="kiln-project-") as tmp:
        work = Path(tmp)
        for fname, content in files.items():
            write_generated(work / fname, content)
        with progress.step(f"building the {board.name} project to measure it"):
            proc = subprocess.run(["make", "-s", "size"], cwd=work, capture_output=True, text=True,
                                  timeout=MEASURE_TIMEOUT_S, stdin=subprocess.DEVNULL)
        m = re.search(r"kiln-size text=(\d+) rodata=(\d+) data=(\d+) bss=(\d+) stack=(\d+) blob=(\d+)", proc.stdout)
        if m is None:
            overflow = _over_budget(board, proc.stderr)
            if overflow is not None:
                raise overflow
            raise ToolchainError(f"make in the generated project for board '{board.name}' failed:\n"
                                 f"{(proc.stdout + proc.stderr)[-8000:]}")
        model = elf_sizes(tool(target, "size"), [work / "build" / f"{src}.o" for src in model_srcs], work)
    text, rodata, data, bss, stack, blob = (int(v) for v in m.groups())
    return {"text": text, "rodata": rodata, "data": data, "bss": bss, "stack": stack,
            "code_image_bytes": text + rodata + data, "blob_linked_bytes": blob,
            "flash_bytes": text + rodata + data + blob, "ram_bytes": data + bss + stack,
            "model": {"text": model.text, "rodata": model.rodata, "data": model.data, "bss": model.bss}}


def firmware_entry(build: BuildResult, files: dict[str, str | bytes], board: Board, target: Target) -> dict:
    """The manifest's `firmware` entry of a --board build; KilnError when it does not fit."""
    _, opt = _opt_flag(target.cflags)
    entry = {"board": board.name, "opt_level": opt, "flash_budget_bytes": board.flash_budget,
             "ram_budget_bytes": board.ram_budget}
    missing = missing_toolchain(target)
    if missing is not None:
        need = check_budget(build.manifest, ram_limit=board.ram_budget - board.stack_bytes,
                            flash_limit=board.flash_budget, source=f"board {board.name}")
        return {**entry, "measured": False,
                "not_measured_because": f"{missing}: the firmware was not built; figures are the model's "
                                        "(arena + stack, weights + estimated code)",
                "flash_bytes": need.flash_bytes, "ram_bytes": need.ram_bytes + board.stack_bytes}
    sizes = measure_project(files, board, target, model_sources(build.files, build.name))
    for kind, need, budget, parts in (
            ("flash", sizes["flash_bytes"], board.flash_budget, ("text", "rodata", "data", "blob_linked_bytes")),
            ("RAM", sizes["ram_bytes"], board.ram_budget, ("data", "bss", "stack"))):
        if need > budget:
            detail = " + ".join(f"{p.replace('_linked_bytes', '')} {sizes[p]}" for p in parts if sizes[p] or p == "text")
            raise KilnError(f"the firmware for board '{board.name}' needs {need} B of {kind} ({detail}), "
                            f"budget is {budget} B: {need - budget} B over")
    return {**entry, "measured": True, "toolchain": target.cc, **sizes}


def board_build(build: BuildResult, board: Board, target: Target, console: str | None = None) -> dict[str, str | bytes]:
    """Every file of the project: the model's, the project's, and the manifest with the firmware's sizes."""
    check_board_target(board, target)
    files = {**build.files, **project_files(build, board, target, console)}
    fw = firmware_entry(build, files, board, target)
    if board.system == "bare-metal":
        fw["console"] = check_console(board, console)  # the Makefile's default CONSOLE
    manifest = {**build.manifest, "firmware": fw}
    files[f"{build.name}.manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    build.manifest.update(manifest)
    return files
