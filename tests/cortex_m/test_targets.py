"""Cortex-M targets and boards are data: every target file loads, names a board that loads,
and every board's linker script renders with its memory map. No toolchain needed."""

from __future__ import annotations

import pytest

from codegen.errors import KilnError
from codegen.targets import available_targets, load_target
from codegen.targets.boards import available_boards, load_board
from codegen.verify.firmware import _ENV
from cortex_m_testing import ALL_TARGETS

QEMU_MACHINES = {"cortex-m0plus": ("microbit", "cortex-m0"), "cortex-m3": ("mps2-an385", "cortex-m3"),
                 "cortex-m4": ("mps2-an386", "cortex-m4"), "cortex-m7": ("mps2-an500", "cortex-m7"),
                 "cortex-m33": ("mps2-an505", "cortex-m33"), "cortex-m55": ("mps3-an547", "cortex-m55")}


def test_all_cortex_m_targets_are_listed():
    assert set(ALL_TARGETS) <= set(available_targets())


@pytest.mark.parametrize("name", ALL_TARGETS)
def test_target_flags_variants_and_board(name):
    t = load_target(name)
    assert t.cc == "arm-none-eabi-gcc" and t.runner == "qemu-system"
    assert f"-mcpu={name}" in t.cflags and "-mthumb" in t.cflags and "-O2" in t.cflags
    has_fpu = name in ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55")
    assert ("-mfloat-abi=hard" in t.cflags) == has_fpu
    assert any(f.startswith("-mfpu=") for f in t.cflags) == has_fpu
    assert t.variants[-1] == "reference"
    assert ("cortex_m_dsp" in t.variants) == has_fpu  # every core with an FPU here has the DSP extension
    assert ("mve" in t.variants) == (name == "cortex-m55")
    board = load_board(t.board)
    assert (board.qemu_machine, board.qemu_cpu) == QEMU_MACHINES[name]


def test_host_target_has_no_board():
    assert load_target("host").board is None


@pytest.mark.parametrize("name", ["mps2-an385", "mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547", "microbit"])
def test_board_linker_script_has_its_memory_map(name):
    b = load_board(name)
    assert name in available_boards()
    script = _ENV.get_template("cortex_m/link.ld.j2").render(b=b)
    assert f"FLASH (rx) : ORIGIN = 0x{b.flash.origin:08x}, LENGTH = 0x{b.flash.length:08x}" in script
    assert f"RAM (rwx) : ORIGIN = 0x{b.ram.origin:08x}, LENGTH = 0x{b.ram.length:08x}" in script
    assert ('REGION_ALIAS("SAMPLES", EXT)' in script) == (b.ext is not None)
    assert ("VECTORS (rx) : ORIGIN = 0x00000000" in script) == (b.vectors is not None)
    assert f". += {b.stack_bytes};" in script
    assert 0 < b.flash_budget <= b.flash.length and 0 < b.ram_budget <= b.ram.length


def test_unknown_board_is_one_clear_error():
    with pytest.raises(KilnError, match="unknown board 'nope'"):
        load_board("nope")
