"""The console and clock of a board project: kiln_board.h and kiln_board.c from the board's data file.

A real board has no debugger attached in the field, so its project prints through the UART
named in the board file's [console] (driver kind, base address, input clock, baud, pins) and
ends a run with a "kiln-exit <status>" line; QEMU's boards keep semihosting by default (console
and exit status without a serial port), and either board takes `--console uart|semihosting`
(the project's Makefile variable CONSOLE, changeable at `make` time). The startup code runs the
board's [clock] steps (PLL, flash wait states) and the UART's own set-up steps before main.
Python computes every register value here; the templates only print them.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen import __version__
from codegen.errors import KilnError
from codegen.targets.boards import Board, RegisterStep, Uart

CONSOLES = ("uart", "semihosting")

# nRF51/nRF52 UART BAUDRATE register values (nRF51 Series Reference Manual v3.0, UART chapter,
# table "BAUDRATE"; the same in the nRF52840 Product Specification): a table, not a divisor.
NRF_BAUDRATE = {1200: 0x0004F000, 2400: 0x0009D000, 4800: 0x0013B000, 9600: 0x00275000,
                14400: 0x003B0000, 19200: 0x004EA000, 28800: 0x0075F000, 38400: 0x009D5000,
                57600: 0x00EBF000, 76800: 0x013A9000, 115200: 0x01D7E000, 230400: 0x03AFB000,
                250000: 0x04000000, 460800: 0x075F7000, 921600: 0x0EBED000, 1000000: 0x10000000}
STEP_OPS = {"set": "KILN_STEP_SET", "wait": "KILN_STEP_WAIT", "delay": "KILN_STEP_DELAY"}


@dataclass(frozen=True)
class UartCtx:
    kind: str
    macro: str  # KILN_UART_<KIND>: selects the driver in kiln_uart.h
    base_hex: str
    clock_hz: int
    baud: int
    tx_pin: str
    rx_pin: str
    tx_pin_number: int  # the nRF UART's PSELTXD; 0 for the others (their pins are routed by setup steps)
    divisor: int
    divisor_meaning: str


@dataclass(frozen=True)
class StepCtx:
    op_name: str
    address_hex: str
    mask_hex: str
    value_hex: str
    what: str


@dataclass(frozen=True)
class BoardHeaderCtx:
    kiln_version: str
    board: str
    description: str
    core_hz: int
    clock_source: str
    uart: UartCtx | None
    steps: tuple[StepCtx, ...]


def uart_divisor(uart: Uart, board: str) -> tuple[int, str]:
    """The value of the UART's baud register and what it means."""
    where = f"boards/{board}.toml"
    if uart.kind == "nrf-uart":
        if uart.baud not in NRF_BAUDRATE:
            raise KilnError(f"the nRF UART has no BAUDRATE value for {uart.baud} baud "
                            f"(known: {', '.join(map(str, NRF_BAUDRATE))})", where=where)
        return NRF_BAUDRATE[uart.baud], f"BAUDRATE for {uart.baud} baud (data sheet table)"
    if uart.kind == "pl011":
        # The PL011's divisor is clock / (16 x baud) with a 6-bit fraction, rounded as the
        # RP2040 data sheet (4.2.7.1) and the Pico SDK compute it: 8 x clock / baud in 1/128ths.
        div = 8 * uart.clock_hz // uart.baud
        ibrd, fbrd = div >> 7, ((div & 0x7F) + 1) // 2
        if not 1 <= ibrd <= 0xFFFF:
            raise KilnError(f"{uart.baud} baud from a {uart.clock_hz} Hz clock is outside the PL011's divisor "
                            "range", where=where)
        return ibrd << 6 | fbrd, f"IBRD {ibrd} << 6 | FBRD {fbrd}: {uart.clock_hz} / (16 x {uart.baud})"
    if uart.kind == "stm32-lpuart":
        div = round(256 * uart.clock_hz / uart.baud)
        lo, hi, meaning = 0x300, 0xFFFFF, f"256 x {uart.clock_hz} / {uart.baud}"
    else:
        div = round(uart.clock_hz / uart.baud)
        lo = 16
        hi, meaning = (0xFFFFF, f"{uart.clock_hz} / {uart.baud}") if uart.kind == "cmsdk-uart" \
            else (0xFFFF, f"{uart.clock_hz} / {uart.baud}, 16x oversampling")
    if not lo <= div <= hi:
        raise KilnError(f"{uart.baud} baud from a {uart.clock_hz} Hz clock needs divisor {div}, outside "
                        f"{lo}..{hi} of the {uart.kind}", where=where)
    return div, meaning


def _pin_number(uart: Uart) -> int:
    if uart.kind != "nrf-uart":
        return 0
    port, _, pin = uart.tx_pin.partition(".")
    return (32 if port == "P1" else 0) + int(pin)


def _step(s: RegisterStep) -> StepCtx:
    return StepCtx(STEP_OPS[s.op], f"0x{s.address:08x}", f"0x{s.mask:08x}", f"0x{s.value:08x}", s.what)


def board_header_context(board: Board) -> BoardHeaderCtx:
    uart = None
    if board.uart is not None:
        u = board.uart
        divisor, meaning = uart_divisor(u, board.name)
        uart = UartCtx(u.kind, "KILN_UART_" + u.kind.upper().replace("-", "_"), f"0x{u.base:08x}", u.clock_hz,
                       u.baud, u.tx_pin, u.rx_pin, _pin_number(u), divisor, meaning)
    clock_steps = board.clock.steps if board.clock else ()
    uart_steps = board.uart.setup if board.uart else ()
    return BoardHeaderCtx(__version__, board.name, board.description,
                          board.clock.core_hz if board.clock else board.reset_hz,
                          board.clock.source if board.clock else "",
                          uart, tuple(_step(s) for s in (*clock_steps, *uart_steps)))


def default_console(board: Board) -> str:
    """Semihosting on QEMU's boards (their runs need no serial port), the UART on real boards."""
    return "uart" if board.uart is not None and board.qemu_machine is None else "semihosting"


def check_console(board: Board, console: str | None) -> str:
    console = console or default_console(board)
    if console not in CONSOLES:
        raise KilnError(f"--console must be one of {', '.join(CONSOLES)}, not '{console}'")
    if console == "uart" and board.uart is None:
        raise KilnError(f"board '{board.name}' has no UART in its data file ([console] of boards/{board.name}.toml): "
                        "use --console semihosting")
    return console
