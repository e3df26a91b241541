"""Table-driven tests of the fusion cost model and of the targets' [cost] tables."""

import dataclasses

import pytest

from codegen.errors import KilnError
from codegen.fusion.costmodel import (Step, Work, class_constants, estimate, kernel_estimate,
                                      live_registers)
from codegen.fusion.target_cost import CostParams, cost_params, parse_cost_table
from codegen.ops.registry import OpKind
from codegen.targets import available_targets, load_target

EW, BC, MAC = OpKind.ELEMENTWISE, OpKind.BROADCAST, OpKind.OUT_ELEMWISE_FUSABLE

VALID = {"int8_macs_per_insn": 2, "f32_macs_per_insn": 1, "simd_bytes": 4, "registers": 13,
         "call_overhead_insns": 25, "load_bytes_per_insn": 4, "dcache_bytes": 0, "flash_wait_states": 0}


def params(**kw) -> CostParams:
    base = dict(VALID, target="t", family="reference")
    base.update(kw)
    return CostParams(**base)


@pytest.mark.parametrize("target", available_targets())
def test_every_target_has_a_cost_table(target):
    p = cost_params(load_target(target))
    assert p.registers >= 2 and p.int8_macs_per_insn >= 1 and p.load_bytes_per_insn >= 1


@pytest.mark.parametrize("table, message", [
    (None, r"no \[cost\] table"),
    ({k: v for k, v in VALID.items() if k != "registers"}, "lacks registers"),
    ({**VALID, "cache_ways": 4}, "unknown key"),
    ({**VALID, "simd_bytes": -4}, "non-negative integer"),
    ({**VALID, "dcache_bytes": True}, "non-negative integer"),
    ({**VALID, "registers": 1.5}, "non-negative integer"),
    ({**VALID, "int8_macs_per_insn": 0}, "int8_macs_per_insn >= 1 are needed"),
])
def test_bad_cost_tables_are_refused_in_one_line(table, message):
    with pytest.raises(KilnError, match=message):
        parse_cost_table("t", table)


def f32_chain(steps: int, elements: int = 1024) -> Work:
    return Work(kind=EW, dtype="float32", out_elements=elements, in_elements=elements * 2, itemsize=4,
                steps=tuple(Step(BC, "float32", constants=2, operand=True) for _ in range(steps)))


def conv(macs: int, outputs: int, dtype: str = "int8") -> Work:
    return Work(kind=MAC, dtype=dtype, macs=macs, out_elements=outputs, in_elements=outputs,
                itemsize=1 if dtype == "int8" else 4, weight_bytes=macs // outputs * 8)


def test_estimate_is_the_formula():
    p = params(call_overhead_insns=10)
    w = f32_chain(1, 100)
    c = class_constants("reference", EW, "float32")
    s = class_constants("reference", BC, "float32")
    want = 10 + c["insns_per_call"] + c["insns_per_output"] * 100 + c["insns_per_access"] * 300 + s["insns_per_step"] * 100
    e = kernel_estimate(w, p)
    assert e.instructions == round(want) and e.cycles == e.instructions and e.calls == 1
    assert (e.sram_read_bytes, e.sram_write_bytes) == (800, 400)


@pytest.mark.parametrize("name, cheaper, dearer", [
    # The same int8 convolution: SMLAD kernels (2 MACs per instruction) beat portable C.
    ("dsp vs reference", params(family="cortex_m_dsp"), params(family="reference")),
    # MVE's 16 MACs per instruction beat the DSP extension's 2 (same kernel constants).
    ("mve vs dsp", params(family="cortex_m_dsp", int8_macs_per_insn=16), params(family="cortex_m_dsp")),
    # Flash wait states slow the weight loads.
    ("no wait states", params(), params(flash_wait_states=3)),
])
def test_target_parameters_order_conv_costs(name, cheaper, dearer):
    w = conv(macs=200_000, outputs=2_000)
    assert kernel_estimate(w, cheaper).cycles < kernel_estimate(w, dearer).cycles, name


def test_soft_float_costs_more_than_an_fpu():
    w = conv(macs=50_000, outputs=500, dtype="float32")
    assert kernel_estimate(w, params(f32_macs_per_insn=0)).instructions > 10 * kernel_estimate(w, params()).instructions


@pytest.mark.parametrize("dcache, footprint_over, extra", [(0, 0, False), (32768, 0, False), (1024, 1, True)])
def test_cache_misses_only_past_the_cache(dcache, footprint_over, extra):
    w = f32_chain(1, 1024)  # 8 KiB read, 4 KiB written
    e = kernel_estimate(w, params(dcache_bytes=dcache))
    assert (e.cycles > e.instructions) == extra


@pytest.mark.parametrize("steps, registers, spills", [(1, 13, 0), (2, 13, 0), (3, 13, 1), (4, 13, 4), (4, 32, 0), (6, 8, 15)])
def test_register_pressure(steps, registers, spills):
    w = f32_chain(steps)
    assert live_registers(w) == 4 + 1 + steps + 2 * steps
    assert kernel_estimate(w, params(registers=registers)).spills == spills


@pytest.mark.parametrize("steps", [2, 3])
def test_fusing_a_float_chain_saves_calls_accesses_and_arena(steps):
    p = params()
    unfused = [dataclasses.replace(f32_chain(1), arena_bytes=4096 if k < steps - 1 else 0) for k in range(steps)]
    fused = Work(kind=EW, dtype="float32", out_elements=1024, in_elements=1024 * (1 + steps), itemsize=4,
                 steps=tuple(s for w in unfused for s in w.steps))
    u, f = estimate(unfused, p), estimate([fused], p)
    assert u.calls == steps and f.calls == 1
    assert f.instructions < u.instructions
    assert u.arena_bytes == 4096 * (steps - 1) and f.arena_bytes == 0
    assert f.sram_write_bytes < u.sram_write_bytes


def test_estimate_of_a_group_is_the_sum():
    p = params()
    works = [conv(10_000, 100), f32_chain(2)]
    total = estimate(works, p)
    assert total.instructions == sum(kernel_estimate(w, p).instructions for w in works)
    assert total.calls == 2


@pytest.mark.parametrize("family, kind, dtype, target, section", [
    ("reference", MAC, "float32", "host", ("target", "host", MAC.value, "float32")),  # measured on the host
    ("reference", MAC, "float32", "cortex-m3", ("reference", MAC.value, "float32")),  # no own calibration
    ("cortex_m_dsp", MAC, "int8", "cortex-m4", ("cortex_m_dsp", MAC.value, "int8")),
    ("cortex_m_dsp", MAC, "float32", "cortex-m4", ("reference", MAC.value, "float32")),  # no DSP float kernels
    ("mve", OpKind.INJECTIVE, "int8", "cortex-m55", ("reference", OpKind.INJECTIVE.value, "any")),
])
def test_calibration_section_lookup(family, kind, dtype, target, section):
    import tomllib

    from codegen.fusion.costmodel import _COSTS_FILE, class_section

    table = tomllib.loads(_COSTS_FILE.read_text())
    for key in section:
        table = table[key]
    fam, consts = class_section(family, kind, dtype, target)
    assert all(consts[k] == v for k, v in table.items())
    assert fam == (family if section[0] in ("target", family) else "reference")
