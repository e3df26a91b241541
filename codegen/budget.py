"""RAM and flash budgets: does a compiled model fit, and if not, by how much.

`--ram-limit` / `--flash-limit` (and a board's budget, once `--board` builds) are checked
right after compilation, before any file is written: a model that does not fit fails with
one line giving what it needs and the budget, exit status 2.

What is counted, from the build alone (no target compiler needed):
- RAM: the activation arena, a streaming model's variables beside it, and the model's input
  and output buffers when they are the caller's (with --io-in-arena they are inside the arena).
  The stack is the application's (`kiln profile` measures a whole firmware). When the build as
  asked needs more than --ram-limit, the compiler searches for the fastest build that fits
  (codegen/memory/fit.py).
- flash: the constant data (weights, biases, requantization tables), exact, plus an estimate
  of the generated code: 1.5 KiB per distinct kernel and 128 B per kernel call (its
  parameter struct and the call). Measured on the MLPerf Tiny int8 and float models built
  for Cortex-M4 with arm-none-eabi-gcc -O2 (text + rodata of the model's .c: 1.3 to 8.5 KiB),
  the estimate is above the real size by 10 to 110 %, so a model that passes fits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codegen.errors import KilnError

CODE_BYTES_PER_KERNEL = 1536
CODE_BYTES_PER_CALL = 128

_UNITS = {"": 1, "B": 1, "K": 2 ** 10, "KB": 2 ** 10, "KIB": 2 ** 10, "M": 2 ** 20, "MB": 2 ** 20,
          "MIB": 2 ** 20, "G": 2 ** 30, "GB": 2 ** 30, "GIB": 2 ** 30}


def parse_size(text: str) -> int:
    """Bytes from '65536', '64K', '64KiB', '1.5M', '2G' (binary units: K = 1024)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).upper() if m else None
    if m is None or unit not in _UNITS:
        raise ValueError(f"'{text}' is not a size (bytes, or a number with K, M or G: 64K, 1.5M)")
    value = float(m.group(1)) * _UNITS[unit]
    if value != int(value):
        raise ValueError(f"'{text}' is not a whole number of bytes")
    return int(value)


@dataclass(frozen=True)
class Need:
    """What a build needs: RAM (the arena, and the inputs and outputs unless they are inside
    it) and flash (weights, estimated code)."""

    arena_bytes: int
    weights_bytes: int
    code_bytes: int  # estimate
    io_bytes: int = 0  # the caller's input and output buffers (0 with --io-in-arena)
    state_bytes: int = 0  # a streaming model's variables, beside the arena

    @property
    def ram_bytes(self) -> int:
        return self.arena_bytes + self.io_bytes + self.state_bytes

    @property
    def flash_bytes(self) -> int:
        return self.weights_bytes + self.code_bytes


def need_of(manifest: dict) -> Need:
    """The needs of a build, from its manifest."""
    code = (CODE_BYTES_PER_KERNEL * len(manifest["kernels"])
            + CODE_BYTES_PER_CALL * len(manifest["fusion_groups"]))
    ram = manifest.get("ram", {})
    io = 0 if ram.get("io_in_arena", True) else int(ram["io_bytes"])
    return Need(int(manifest["arena_bytes"]), int(manifest["weights_bytes"]), code, io,
                int(manifest.get("state_bytes", 0)))


def check_budget(manifest: dict, *, ram_limit: int | None = None, flash_limit: int | None = None,
                 source: str | None = None) -> Need:
    """KilnError when the build needs more than `ram_limit` / `flash_limit` bytes.

    `source` names where the budget comes from ("board mps2-an386"); default: the options.
    """
    need = need_of(manifest)
    if ram_limit is not None and need.ram_bytes > ram_limit:
        parts = [f"arena {need.arena_bytes} B"]
        parts += [f"inputs and outputs {need.io_bytes} B"] if need.io_bytes else []
        parts += [f"variables {need.state_bytes} B"] if need.state_bytes else []
        raise KilnError(f"needs {need.ram_bytes} B of RAM ({' + '.join(parts)}), budget is {ram_limit} B "
                        f"({source or '--ram-limit'}): {need.ram_bytes - ram_limit} B over")
    if flash_limit is not None and need.flash_bytes > flash_limit:
        raise KilnError(f"needs {need.flash_bytes} B of flash (weights {need.weights_bytes} B + code about "
                        f"{need.code_bytes} B), budget is {flash_limit} B ({source or '--flash-limit'}): "
                        f"{need.flash_bytes - flash_limit} B over")
    return need
