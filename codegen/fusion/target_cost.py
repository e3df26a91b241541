"""The cost parameters of a target: the `[cost]` table of boards/targets/<name>.toml.

The schema is shared with the target files' authors; every key is a required integer:

  int8_macs_per_insn   int8 multiply-accumulates one MAC instruction does (SMLAD 2, MVE 16)
  f32_macs_per_insn    float32 MACs per instruction (0: no FPU, soft-float)
  simd_bytes           vector register width in bytes (0: none)
  registers            registers an inner loop can keep values in
  call_overhead_insns  instructions of one kernel call's prologue, epilogue and loop set-up
  load_bytes_per_insn  widest common load
  dcache_bytes         data cache size (0: none)
  flash_wait_states    extra cycles per flash access for weights

Optional keys (with their defaults) may be added here only; none yet. The values are read
as data so that a new target needs no code, and the cost model stays a pure function of
(group, CostParams).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, fields

from codegen.errors import KilnError
from codegen.resources import TARGETS


@dataclass(frozen=True)
class CostParams:
    target: str
    int8_macs_per_insn: int
    f32_macs_per_insn: int
    simd_bytes: int
    registers: int
    call_overhead_insns: int
    load_bytes_per_insn: int
    dcache_bytes: int
    flash_wait_states: int
    # The kernel family the target's variants give the heavy ops ("reference", "cortex_m_dsp",
    # "mve", "neon", ...): selects the calibrated per-op-class constants. Not in the file.
    family: str = "reference"


_KEYS = tuple(f.name for f in fields(CostParams) if f.name not in ("target", "family"))


def parse_cost_table(target: str, table: object) -> dict[str, int]:
    """The `[cost]` table checked against the schema: every key present, a non-negative int."""
    if not isinstance(table, dict):
        raise KilnError(f"target '{target}' has no [cost] table (needed by the fusion cost model)")
    missing = [k for k in _KEYS if k not in table]
    if missing:
        raise KilnError(f"target '{target}' [cost] lacks {', '.join(missing)}")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise KilnError(f"target '{target}' [cost] has unknown key(s) {', '.join(unknown)}")
    bad = [k for k in _KEYS if isinstance(table[k], bool) or not isinstance(table[k], int) or table[k] < 0]
    if bad:
        raise KilnError(f"target '{target}' [cost] {bad[0]} must be a non-negative integer, not {table[bad[0]]!r}")
    if table["registers"] < 2 or table["load_bytes_per_insn"] < 1 or table["int8_macs_per_insn"] < 1:
        raise KilnError(f"target '{target}' [cost]: registers >= 2, load_bytes_per_insn >= 1 and "
                        "int8_macs_per_insn >= 1 are needed")
    return {k: int(table[k]) for k in _KEYS}


@functools.lru_cache(maxsize=None)
def _table_of(name: str) -> dict[str, int]:
    path = TARGETS / f"{name}.toml"
    if not path.is_file():
        raise KilnError(f"no target file for '{name}' (its [cost] table)")
    return parse_cost_table(name, tomllib.loads(path.read_text()).get("cost"))


def cost_params(target) -> CostParams:
    """The cost parameters of a `codegen.targets.Target` (its file's `[cost]` table)."""
    family = next((v for v in target.variants if v != "reference"), "reference")
    return CostParams(target=target.name, family=family, **_table_of(target.name))
