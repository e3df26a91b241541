"""The fusion cost model: a pure function of (kernels of a candidate group, target parameters).

A candidate is compared as two lists of kernels, the unfused one (one kernel per node) and
the fused one, each kernel described by its `Work` (what it computes, independent of the
target). `estimate` turns a list of Work into instructions, cycles, bytes moved per memory
level and the bytes it leaves in the arena:

  instructions = calls * call overhead
               + MAC instructions * insns_per_mac_insn      (MACs / the target's MACs per instruction)
               + taps * insns_per_tap                       (an inner loop started per output and window
                                                             position: short loops cost more per MAC)
               + output elements * insns_per_output         (requantisation, clamps, loop control)
               + element accesses * insns_per_access        (loads/stores of activations)
               + register spills of the inner loop
  cycles = instructions + flash wait states per weight load + cache misses (targets with a
           data cache, when a kernel's working set exceeds it)

The per-op-class constants (`insns_per_mac_insn`, `insns_per_output`, ...) depend on how a
kernel family is written, not on the core: they are data (kernel_costs.toml), keyed by
kernel family, op kind and dtype, calibrated against exact instruction counts
(bench/fusion.py, bench/FUSION.md). The planner reads kinds, never op names.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from codegen.fusion.target_cost import CostParams
from codegen.ops.registry import OpKind

_COSTS_FILE = Path(__file__).with_name("kernel_costs.toml")
# A miss costs about this many cycles on the cached cores (line fill from SRAM/DRAM).
_MISS_CYCLES = 20
_LINE_BYTES = 32
# One software float operation on a core without an FPU (libgcc's __aeabi_fmul and friends).
_SOFT_FLOAT_INSNS = 40


@dataclass(frozen=True)
class Step:
    """One elementwise step applied per element inside a (fused) loop."""

    kind: OpKind
    dtype: str
    constants: int  # values the step keeps live in registers (clamp bounds, rescale constants)
    operand: bool  # reads one more tensor (a binary step) besides the running value


@dataclass(frozen=True)
class Work:
    """What one kernel call does, independent of the target."""

    kind: OpKind  # the kind of its main op (a fused chain: ELEMENTWISE)
    dtype: str  # of its main input ("float32", "int8", ...)
    macs: int = 0
    taps: int = 0  # (output element, kernel window position) pairs: inner loops a MAC kernel starts
    out_elements: int = 0
    in_elements: int = 0  # activation elements read (not weights), all inputs together
    itemsize: int = 1
    weight_bytes: int = 0  # constants read from flash
    steps: tuple[Step, ...] = ()  # elementwise steps per output element (elementwise kernels)
    arena_bytes: int = 0  # bytes of its output that live in the arena (intermediates)

    @property
    def accesses(self) -> int:
        return self.in_elements + self.out_elements


@dataclass(frozen=True)
class Estimate:
    calls: int
    instructions: int
    cycles: int
    sram_read_bytes: int
    sram_write_bytes: int
    flash_bytes: int
    arena_bytes: int  # bytes written to arena buffers (intermediates the group materialises)
    spills: int  # register spills per element in inner loops (0: fits the register file)

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(*(a + b for a, b in zip(_astuple(self), _astuple(other))))


def _astuple(e: Estimate) -> tuple[int, ...]:
    return (e.calls, e.instructions, e.cycles, e.sram_read_bytes, e.sram_write_bytes, e.flash_bytes,
            e.arena_bytes, e.spills)


ZERO = Estimate(0, 0, 0, 0, 0, 0, 0, 0)


@functools.lru_cache(maxsize=None)
def _tables() -> dict:
    return tomllib.loads(_COSTS_FILE.read_text())


def class_section(family: str, kind: OpKind, dtype: str, target: str = "") -> tuple[str, dict[str, float]]:
    """The kernel family whose calibrated constants apply to (kind, dtype) and the constants:
    the target's own calibration if it has one ([target.<name>...], measured on that target),
    else its kernel family's if that family has kernels of the class, else the portable
    reference kernels'; the dtype's entry, else the kind's generic one ("any")."""
    tables = _tables()
    candidates = [(family, tables.get("target", {}).get(target, {}))] if target else []
    candidates += [(fam, tables.get(fam, {})) for fam in (family, "reference")]
    for fam, table in candidates:
        section = table.get(kind.value, {})
        for dt in (dtype, "any"):
            if dt in section:
                return fam, {**tables["default"], **section[dt]}
    return "reference", dict(tables["default"])


def class_constants(family: str, kind: OpKind, dtype: str, target: str = "") -> dict[str, float]:
    return class_section(family, kind, dtype, target)[1]


def macs_per_insn(params: CostParams, dtype: str, family: str | None = None) -> float:
    """MACs one instruction does for kernels of `family` (default the target's) on this
    target; the portable reference kernels do one."""
    if (params.family if family is None else family) == "reference":
        return 1.0
    if dtype == "float32":
        return float(max(params.f32_macs_per_insn, 1))
    return float(params.int8_macs_per_insn)


def live_registers(work: Work) -> int:
    """Values an elementwise inner loop keeps live: counter, bound, output pointer, running
    value, one pointer per tensor read and each step's constants."""
    operands = 1 + sum(s.operand for s in work.steps)
    return 4 + operands + sum(s.constants for s in work.steps)


def kernel_estimate(work: Work, params: CostParams) -> Estimate:
    """The estimate of one kernel call."""
    family, c = class_section(params.family, work.kind, work.dtype, params.target)
    soft = params.f32_macs_per_insn == 0 and work.dtype == "float32"
    flop = _SOFT_FLOAT_INSNS if soft else 1
    insns = params.call_overhead_insns + c["insns_per_call"]
    insns += c["insns_per_mac_insn"] * work.macs / macs_per_insn(params, work.dtype, family) * flop
    insns += c["insns_per_tap"] * work.taps
    insns += c["insns_per_output"] * work.out_elements
    insns += c["insns_per_access"] * work.accesses
    spills = 0
    # A step in a MAC kernel's epilogue (a residual Add) costs its `insns_per_epilogue`: the
    # step's arithmetic on a value in registers, without the elementwise kernel's loads and loop.
    per_step = "insns_per_epilogue" if work.macs else "insns_per_step"
    for step in work.steps:
        s = class_constants(params.family, step.kind, step.dtype, params.target)
        insns += s.get(per_step, s["insns_per_step"]) * work.out_elements * (flop if step.dtype == "float32" else 1)
    if work.steps and not work.macs:
        spills = max(0, live_registers(work) - params.registers)
        insns += 2 * spills * work.out_elements  # a store and a reload per spilled value
    read = work.in_elements * work.itemsize
    write = work.out_elements * work.itemsize
    cycles = insns + params.flash_wait_states * work.weight_bytes / params.load_bytes_per_insn
    if params.dcache_bytes:  # what does not fit the cache streams through it: one miss per line
        cycles += _MISS_CYCLES * max(0, read + write + work.weight_bytes - params.dcache_bytes) / _LINE_BYTES
    return Estimate(calls=1, instructions=round(insns), cycles=round(cycles), sram_read_bytes=read,
                    sram_write_bytes=write, flash_bytes=work.weight_bytes, arena_bytes=work.arena_bytes,
                    spills=spills)


def estimate(works: tuple[Work, ...] | list[Work], params: CostParams) -> Estimate:
    """The estimate of a group of kernel calls: the sum of its kernels'."""
    total = ZERO
    for w in works:
        total = total + kernel_estimate(w, params)
    return total
