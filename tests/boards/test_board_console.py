"""The UART console of board projects: the board file's [console] gives the register values,
the same firmware prints its result through the UART in QEMU (CMSDK UART on the MPS2 boards, the
STM32 USART on netduinoplus2, the nRF51 UART on the micro:bit) and through semihosting, the real
boards' projects (clock set-up, UART, cycle counter) build with strict flags."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from dataclasses import replace

from codegen.board_console import board_header_context, check_console, default_console, uart_divisor
from codegen.cli import main as kiln
from codegen.errors import KilnError
from codegen.targets.boards import Uart, available_boards, load_board
from codegen.verify.reference import run_reference
from tests.boards.test_board_projects import STRICT, TINY, build_project, make, needs_toolchain

# Baud register values, computed by hand from the data sheets (see each board file).
DIVISORS = {"mps2-an386": 217, "mps2-an505": 174, "mps3-an547": 278, "netduinoplus2": 139,
            "stm32f746g-disco": 938, "nucleo-l4r5zi": 266667, "microbit": 0x01D7E000,
            "nrf52840-dk": 0x01D7E000, "rpi-pico": 6 << 6 | 33, "lm3s6965evb": 6 << 6 | 33}
QEMU_UART_BOARDS = ["mps2-an386", "netduinoplus2", "microbit", "mps2-an505", "mps3-an547", "lm3s6965evb"]
REAL_UART_BOARDS = ["nucleo-l4r5zi", "stm32f746g-disco", "nrf52840-dk", "rpi-pico"]
RESULT = re.compile(r"tiny_int8: output 0 largest at (\d+), value (-?\d+)")


def needs_qemu(board: str) -> None:
    needs_toolchain(board)
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm not found")


@pytest.mark.parametrize("board,divisor", sorted(DIVISORS.items()))
def test_board_files_give_the_uart_divisor(board, divisor):
    b = load_board(board)
    assert uart_divisor(b.uart, board)[0] == divisor
    header = board_header_context(b)
    assert header.uart.divisor == divisor and header.uart.base_hex == f"0x{b.uart.base:08x}"


def test_real_boards_set_their_clock_and_default_to_the_uart_qemu_boards_to_semihosting():
    for name in REAL_UART_BOARDS:
        b = load_board(name)
        assert b.clock is not None and b.clock.core_hz > 0 and b.clock.source
        assert default_console(b) == "uart"
    assert load_board("nucleo-l4r5zi").clock.core_hz == 120_000_000
    assert load_board("stm32f746g-disco").clock.core_hz == 216_000_000
    for name in QEMU_UART_BOARDS:
        assert default_console(load_board(name)) == "semihosting"
    assert load_board("rpi-pico").clock.core_hz == 12_000_000
    for name in available_boards():
        b = load_board(name)
        for step in (*(b.clock.steps if b.clock else ()), *(b.uart.setup if b.uart else ())):
            assert step.what and (step.op == "delay" or step.value & ~step.mask == 0)


def test_a_baud_rate_the_uart_cannot_make_is_one_clear_error():
    with pytest.raises(KilnError, match="no BAUDRATE value for 12345 baud"):
        uart_divisor(Uart("nrf-uart", 0x40002000, 16_000_000, 12345, "P0.24", "", ()), "microbit")
    with pytest.raises(KilnError, match="needs divisor 1, outside 16"):
        uart_divisor(Uart("cmsdk-uart", 0x40004000, 1_000_000, 1_000_000, "x", "", ()), "mps2-an386")


def test_console_option_errors(tmp_path, capsys):
    with pytest.raises(KilnError, match="board 'mps2-an386' has no UART in its data file"):
        check_console(replace(load_board("mps2-an386"), uart=None), "uart")
    assert check_console(replace(load_board("mps2-an386"), uart=None), None) == "semihosting"
    assert kiln(["build", str(TINY), "--target", "cortex-m4", "--console", "uart", "-o", str(tmp_path / "q")]) == 2
    assert "--console needs --board" in capsys.readouterr().err


def _run_printed(proc: subprocess.CompletedProcess) -> tuple[int, int]:
    m = RESULT.search(proc.stdout + proc.stderr)
    assert m is not None, proc.stdout + proc.stderr
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("board", QEMU_UART_BOARDS)
def test_the_uart_console_prints_the_reference_result_in_qemu_and_semihosting_still_does(board, tmp_path):
    needs_qemu(board)
    out, manifest = build_project(tmp_path, board, "--console", "uart")
    assert "CONSOLE ?= uart" in (out / "Makefile").read_text() and manifest["firmware"]["console"] == "uart"
    (spec,) = manifest["inputs"]
    x = np.random.default_rng(5).integers(-128, 128, spec["shape"], dtype=np.int8)
    (tmp_path / "input.bin").write_bytes(x.tobytes())
    (ref,) = run_reference(TINY, [{spec["name"]: x}])
    expected = np.asarray(list(ref.values())[0]).ravel()
    want = (int(np.argmax(expected)), int(expected.max()))
    uart = make(out, "-s", "run", f"INPUT={tmp_path / 'input.bin'}", f"CFLAGS={STRICT}")
    assert uart.returncode == 0, uart.stdout + uart.stderr
    assert "kiln-exit 0" in uart.stdout
    # the UART's text is on QEMU's serial port (stdout), never on the semihosting console (stderr)
    assert "tiny_int8:" not in uart.stderr
    semi = make(out, "-s", "run", "CONSOLE=semihosting", f"INPUT={tmp_path / 'input.bin'}", f"CFLAGS={STRICT}")
    assert semi.returncode == 0, semi.stdout + semi.stderr
    assert _run_printed(uart) == _run_printed(semi) and "kiln-exit" not in semi.stdout + semi.stderr
    if board != "mps3-an547":  # tiny_int8 on cortex-m55 differs from tflite-micro in `kiln verify` too
        assert _run_printed(uart) == want


def test_the_uart_run_ends_with_the_firmwares_status_and_writes_to_a_serial_file(tmp_path):
    needs_qemu("netduinoplus2")
    out, _ = build_project(tmp_path, "netduinoplus2", "--console", "uart")
    (tmp_path / "short.bin").write_bytes(b"\x01\x02\x03")
    bad = make(out, "-s", "run", f"INPUT={tmp_path / 'short.bin'}")
    assert bad.returncode != 0 and "input file: 3 bytes, the model takes 72" in bad.stdout
    assert "kiln-exit 2" in bad.stdout
    assert make(out, "-s").returncode == 0
    serial = tmp_path / "serial.txt"
    proc = subprocess.run(["qemu-system-arm", "-M", "netduinoplus2", "-cpu", "cortex-m4", "-display", "none",
                           "-no-reboot", "-serial", f"file:{serial}", "-kernel", str(out / "build" / "tiny_int8.elf")],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    text = serial.read_bytes().decode()  # not read_text: it would turn the UART's "\r\n" into "\n"
    assert "\r\n" in text and RESULT.search(text) and text.endswith("kiln-exit 0\r\n")


def test_profile_build_prints_cycles_per_kernel_call(tmp_path):
    """The DWT cycle counter builds and runs; QEMU does not model it, so its counts read 0 there
    (a real board prints its cycles)."""
    needs_qemu("mps2-an386")
    out, manifest = build_project(tmp_path, "mps2-an386", "--console", "uart")
    proc = make(out, "-s", "run", "PROFILE=1", f"CFLAGS={STRICT}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = manifest["fusion_groups"]
    for k, group in enumerate(calls):
        assert re.search(rf"kiln-cycles {k} {group['call']} \({group['kernel']}\) \d+", proc.stdout), proc.stdout
    assert re.search(r"kiln-cycles total \d+ at 25000 kHz", proc.stdout)
    assert (out / "build-profile" / "tiny_int8.elf").is_file() and not (out / "build" / "tiny_int8.elf").exists()


@pytest.mark.parametrize("board", REAL_UART_BOARDS)
def test_real_board_projects_build_strictly_with_either_console_and_the_cycle_counter(board, tmp_path):
    needs_toolchain(board)
    out, manifest = build_project(tmp_path, board)
    assert manifest["firmware"]["measured"]
    board_c = (out / "kiln_board.c").read_text()
    assert all(step.what in board_c for step in load_board(board).clock.steps)
    boot2 = []
    if load_board(board).boot2 is not None:  # a stand-in of the right size: Kiln provides no boot2
        (tmp_path / "boot2.S").write_text('    .section .boot2, "ax"\n    .space 256, 0\n')
        boot2 = [f"BOOT2={tmp_path / 'boot2.S'}"]
    armv6m = load_board(board).core.startswith("cortex-m0")  # no cycle counter: see the test below
    for extra in (["CONSOLE=semihosting"], *([] if armv6m else [["PROFILE=1"]]), []):  # uart last: checked below
        proc = make(out, "-s", f"CFLAGS={STRICT}", *boot2, *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    symbols = subprocess.run(["arm-none-eabi-nm", str(out / "build" / "tiny_int8.elf")], capture_output=True,
                             text=True).stdout
    assert "kiln_board_init" in symbols
    # the UART build makes no semihosting call: a real board runs without a debugger attached
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", str(out / "build" / "tiny_int8.elf")],
                         capture_output=True, text=True).stdout
    assert "bkpt" not in dis


def test_armv6m_has_no_cycle_counter_and_says_so(tmp_path):
    needs_toolchain("microbit")
    out, _ = build_project(tmp_path, "microbit")
    proc = make(out, "-s", "PROFILE=1")
    assert proc.returncode != 0 and "needs the DWT cycle counter of Armv7-M" in proc.stderr
