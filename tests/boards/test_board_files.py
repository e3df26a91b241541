"""Boards are data: every board file loads with a core, a target, a memory map, a budget and a
flash command; board flags and --opt-level rewrite the target's flags. No toolchain needed."""

from __future__ import annotations

import pytest

from codegen.errors import KilnError
from codegen.targets import load_target, with_opt_level
from codegen.targets.boards import available_boards, board_target, load_board
from codegen.verify.firmware import _ENV

REAL_BOARDS = {"nucleo-l4r5zi": "openocd", "stm32f746g-disco": "openocd", "nrf52840-dk": "pyocd",
               "rpi-pico": "picotool", "rpi4": "scp"}
EMULATED_BOARDS = ["mps2-an386", "mps2-an500", "mps3-an547"]


def test_the_issue_boards_exist():
    assert set(REAL_BOARDS) | set(EMULATED_BOARDS) <= set(available_boards())


@pytest.mark.parametrize("name", available_boards())
def test_board_has_target_memory_budget_and_flasher(name):
    b = load_board(name)
    target = load_target(b.target)
    assert target.name.startswith(b.core)  # the micro:bit's Cortex-M0 runs cortex-m0plus code
    assert b.flasher is not None and b.flasher.tool and "$(" in b.flasher.command
    assert 0 < b.ram_budget <= b.ram.length and b.flash_budget > 0
    if b.system == "bare-metal":
        assert target.runner == "qemu-system" and b.stack_bytes > 0
        assert b.flash_budget <= b.flash.length
    else:
        assert b.system == "linux" and target.runner == "qemu-user" and b.flash is None


@pytest.mark.parametrize("name,tool", sorted(REAL_BOARDS.items()))
def test_real_boards_use_their_flasher_and_are_not_emulated(name, tool):
    b = load_board(name)
    assert b.flasher.tool == tool and b.flasher.command.startswith(tool if tool != "copy" else "cp")
    assert b.qemu_machine is None


def test_rp2040_reserves_boot2_and_says_kiln_does_not_provide_it():
    b = load_board("rpi-pico")
    assert (b.boot2.origin, b.boot2.length) == (0x10000000, 256) and b.flash.origin == 0x10000100
    assert "No boot2 is provided by Kiln" in b.notes
    script = _ENV.get_template("cortex_m/link.ld.j2").render(b=b)
    assert "BOOT2 (rx) : ORIGIN = 0x10000000, LENGTH = 0x00000100" in script
    assert ".boot2 : { KEEP(*(.boot2)) } > BOOT2" in script


def test_board_flags_replace_the_targets_same_option():
    f746 = board_target(load_target("cortex-m7"), load_board("stm32f746g-disco"))
    assert "-mfpu=fpv5-sp-d16" in f746.cflags and "-mfpu=fpv5-d16" not in f746.cflags
    assert "-mcpu=cortex-m7" in f746.cflags
    assert board_target(load_target("cortex-m4"), load_board("mps2-an386")).cflags == load_target("cortex-m4").cflags


def test_opt_level_replaces_the_targets_level():
    os_m4 = with_opt_level(load_target("cortex-m4"), "Os")
    assert os_m4.cflags[-1] == "-Os" and "-O2" not in os_m4.cflags and "-mcpu=cortex-m4" in os_m4.cflags
    assert with_opt_level(load_target("host"), "O3").cflags == ("-O3",)
    with pytest.raises(KilnError, match="unknown optimisation level 'O9'"):
        with_opt_level(load_target("host"), "O9")
