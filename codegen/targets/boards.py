"""Boards are data: boards/<name>.toml (core, QEMU machine, memory map, budget), read into `Board`.

A board is where a target's firmware runs: the emulated MPS2/MPS3 boards for Cortex-M. The
memory regions are the ones QEMU maps; the firmware's linker script is generated from them
(boards/cortex_m/link.ld.j2).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from codegen.errors import KilnError
from codegen.resources import BOARDS


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
    qemu_machine: str  # qemu-system-arm -M
    qemu_cpu: str  # qemu-system-arm -cpu (the machine accepts only its own core)
    stack_bytes: int
    flash: MemoryRegion  # code, constants (and the vector table when `vectors` is None)
    vectors: MemoryRegion | None  # where the core boots, when that is not the start of `flash`
    ram: MemoryRegion  # data, bss, stack
    ext: MemoryRegion | None  # test-harness samples only; None: they go to flash
    flash_budget: int  # bytes a firmware may use: text + rodata + data
    ram_budget: int  # data + bss + stack


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
    flash, ram = _region(data, "flash", name), _region(data, "ram", name)
    if flash is None or ram is None:
        raise KilnError("a board needs [memory.flash] and [memory.ram]", where=str(path))
    budget = data.get("budget", {})
    return Board(
        name=name,
        description=data["description"],
        core=data["core"],
        qemu_machine=data["qemu_machine"],
        qemu_cpu=data["qemu_cpu"],
        stack_bytes=int(data["stack_bytes"]),
        flash=flash,
        vectors=_region(data, "vectors", name),
        ram=ram,
        ext=_region(data, "ext", name),
        flash_budget=int(budget.get("flash_bytes", flash.length)),
        ram_budget=int(budget.get("ram_bytes", ram.length)),
    )
