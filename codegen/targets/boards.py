"""Boards are data: boards/<name>.toml (core, memory map, budget, flasher), read into `Board`.

A board is where a target's code runs: the emulated MPS2/MPS3 boards (and the micro:bit) that
`kiln verify` runs Cortex-M firmware on, and real boards that `kiln build --board` writes a
project for. A bare-metal board's linker script is generated from its memory map
(boards/cortex_m/link.ld.j2); a Linux board runs an executable and has no memory map to link to.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace

from codegen.errors import KilnError
from codegen.resources import BOARDS
from codegen.targets import Target


@dataclass(frozen=True)
class MemoryRegion:
    name: str
    origin: int
    length: int

    @property
    def origin_hex(self) -> str:
        return f"0x{self.origin:08x}"

    @property
    def length_hex(self) -> str:
        return f"0x{self.length:08x}"


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    core: str
    qemu_machine: str | None  # qemu-system-arm -M; None: a real board only
    qemu_cpu: str | None  # qemu-system-arm -cpu (the machine accepts only its own core)
    stack_bytes: int
    flash: MemoryRegion | None  # code, constants (and the vector table when `vectors` is None); None on Linux
    vectors: MemoryRegion | None  # where the core boots, when that is not the start of `flash`
    ram: MemoryRegion  # data, bss, stack
    ext: MemoryRegion | None  # test-harness samples only; None: they go to flash
    flash_budget: int  # bytes a firmware may use: text + rodata + data
    ram_budget: int  # data + bss + stack
    target: str | None = None  # the Kiln target `kiln build --board` compiles for by default
    system: str = "bare-metal"  # or "linux": an executable, run by the OS
    cflags: tuple[str, ...] = ()  # replace the target's flag of the same option (-mfpu=...)
    boot2: MemoryRegion | None = None  # a second-stage boot loader's place at the start of flash
    flasher: Flasher | None = None
    notes: str = ""  # what a user must know before flashing (shown in the project's Makefile)
    reset_hz: int = 0  # the core clock out of reset (the cycle counter's unit without a [clock] set-up)
    uart: Uart | None = None  # the console's UART ([console]); None: semihosting only
    clock: ClockSetup | None = None  # the startup's clock set-up ([clock]); None: the reset clock


@dataclass(frozen=True)
class RegisterStep:
    """One step of a board's start-up, applied in order before main (boards/cortex_m/startup.c):
    `set` writes `value` into the `mask` bits of the register at `address` (read-modify-write),
    `wait` spins until those bits read `value`, `delay` spins `value` loop iterations."""

    op: str
    address: int
    mask: int
    value: int
    what: str  # the register and why, from the data sheet (a comment of kiln_board.h)


@dataclass(frozen=True)
class ClockSetup:
    core_hz: int  # the core clock once the steps ran (the cycle counter's unit)
    source: str  # where the figures come from (reference manual, data sheet)
    steps: tuple[RegisterStep, ...]


UART_KINDS = ("cmsdk-uart", "stm32-usart", "stm32-usart-v2", "stm32-lpuart", "nrf-uart", "pl011")


@dataclass(frozen=True)
class Uart:
    """A UART for the console: the peripheral's driver kind (boards/cortex_m/kiln_uart.h), base
    address, its input clock after the clock set-up, the baud rate, its pins, and the steps that
    clock it and route its pins (peripheral clock enables, alternate functions)."""

    kind: str
    base: int
    clock_hz: int
    baud: int
    tx_pin: str
    rx_pin: str
    setup: tuple[RegisterStep, ...]


@dataclass(frozen=True)
class Flasher:
    """How `make flash` puts the image on the board: `command` is one shell line of the project's
    Makefile ($(ELF), $(HEX), $(BIN) name the images; `variables` are Makefile defaults the user
    overrides, like the mount point of a USB drive or an SSH host)."""

    tool: str  # openocd, pyocd, picotool, copy, scp
    command: str
    variables: tuple[tuple[str, str], ...] = ()


def available_boards() -> list[str]:
    return sorted(p.stem for p in BOARDS.glob("*.toml"))


def _region(data: dict, name: str, board: str) -> MemoryRegion | None:
    region = data.get("memory", {}).get(name)
    if region is None:
        return None
    try:
        return MemoryRegion(name, int(region["origin"]), int(region["length"]))
    except KeyError as err:
        raise KilnError(f"memory region '{name}' lacks {err}", where=f"boards/{board}.toml") from None


def load_board(name: str) -> Board:
    path = BOARDS / f"{name}.toml"
    if not path.is_file():
        raise KilnError(f"unknown board '{name}' (known: {', '.join(available_boards())})")
    data = tomllib.loads(path.read_text())
    system = data.get("system", "bare-metal")
    flash, ram = _region(data, "flash", name), _region(data, "ram", name)
    if ram is None or (flash is None and system != "linux"):
        raise KilnError("a board needs [memory.flash] and [memory.ram]", where=str(path))
    budget = data.get("budget", {})
    return Board(
        name=name,
        description=data["description"],
        core=data["core"],
        qemu_machine=data.get("qemu_machine"),
        qemu_cpu=data.get("qemu_cpu"),
        stack_bytes=int(data.get("stack_bytes", 0)),
        flash=flash,
        vectors=_region(data, "vectors", name),
        ram=ram,
        ext=_region(data, "ext", name),
        flash_budget=int(budget.get("flash_bytes", flash.length if flash else 0)),
        ram_budget=int(budget.get("ram_bytes", ram.length)),
        target=data.get("target"),
        system=system,
        cflags=tuple(data.get("cflags", [])),
        boot2=_region(data, "boot2", name),
        flasher=_flasher(data.get("flash"), str(path)),
        notes=data.get("notes", "").strip(),
        reset_hz=int(data.get("reset_hz", 0)),
        uart=_uart(data.get("console"), str(path)),
        clock=_clock(data.get("clock"), str(path)),
    )


STEP_OPS = ("set", "wait", "delay")


def _steps(items: list[dict], where: str) -> tuple[RegisterStep, ...]:
    steps = []
    for item in items:
        op = next((k for k in STEP_OPS if k in item), None)
        if op is None:
            raise KilnError(f"a register step needs one of {', '.join(STEP_OPS)}: {item}", where=where)
        if op == "delay":
            steps.append(RegisterStep("delay", 0, 0, int(item["delay"]), item.get("what", "")))
            continue
        try:
            steps.append(RegisterStep(op, int(item[op]), int(item["mask"]), int(item["value"]), item["what"]))
        except KeyError as err:
            raise KilnError(f"register step {item} lacks {err}", where=where) from None
        if steps[-1].value & ~steps[-1].mask:
            raise KilnError(f"register step '{item['what']}': value 0x{steps[-1].value:x} has bits outside "
                            f"mask 0x{steps[-1].mask:x}", where=where)
    return tuple(steps)


def _uart(data: dict | None, where: str) -> Uart | None:
    if data is None:
        return None
    if data.get("uart") not in UART_KINDS:
        raise KilnError(f"[console] uart must be one of {', '.join(UART_KINDS)}, not {data.get('uart')!r}",
                        where=where)
    try:
        return Uart(data["uart"], int(data["base"]), int(data["clock_hz"]), int(data["baud"]),
                    data["tx_pin"], data.get("rx_pin", ""), _steps(data.get("setup", []), where))
    except KeyError as err:
        raise KilnError(f"[console] lacks {err}", where=where) from None


def _clock(data: dict | None, where: str) -> ClockSetup | None:
    if data is None:
        return None
    try:
        return ClockSetup(int(data["core_hz"]), data["source"], _steps(data.get("steps", []), where))
    except KeyError as err:
        raise KilnError(f"[clock] lacks {err}", where=where) from None


def _flasher(data: dict | None, where: str) -> Flasher | None:
    if data is None:
        return None
    try:
        return Flasher(data["tool"], data["command"], tuple(sorted(data.get("variables", {}).items())))
    except KeyError as err:
        raise KilnError(f"[flash] lacks {err}", where=where) from None


def board_target(target: Target, board: Board) -> Target:
    """`target` with the board's own flags: `-mfpu=fpv5-sp-d16` on a board whose Cortex-M7 has a
    single-precision FPU replaces the target's `-mfpu=fpv5-d16`."""
    options = {f.split("=")[0] for f in board.cflags}
    kept = tuple(f for f in target.cflags if f.split("=")[0] not in options)
    return replace(target, cflags=(*kept, *board.cflags))
