"""The arena on a Cortex-M4 board in QEMU: placed in a named section by the linker script
(KILN_ARENA_SECTION), handed in by the application (--arena caller), holding the inputs and
outputs (--io-in-arena). Each run bit-exact with the default build."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from codegen.targets import load_target
from codegen.verify.firmware import OUTPUT_FILE, build_firmware, read_outputs, tool
from codegen.verify.qemu import run_firmware, run_generated
from codegen.verify.samples import random_samples
from helpers import build_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from inplace_nets import mobilenet_style  # noqa: E402

TARGET = "cortex-m4"
SECTION = ".kiln_sram2"


@pytest.fixture(scope="module")
def net():
    g = mobilenet_style("int8", hw=16)
    plain = build_graph(g, target=TARGET)
    samples = random_samples(plain.manifest["inputs"], 2, seed=3)
    return g, plain, samples, run_generated(plain.files, "t", samples, load_target(TARGET))


def _same(got, want):
    for a, b in zip(got, want):
        for name in b:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def _in_section(script: str) -> str:
    """The board's script with the user's section, 32-byte aligned, in RAM before the stack."""
    placed = f"    {SECTION} (NOLOAD) : ALIGN(32) {{ __kiln_sram2_start = .; *({SECTION}) }} > RAM\n"
    return script.replace("    .stack (NOLOAD)", placed + "    .stack (NOLOAD)", 1)


def test_arena_in_a_named_section(cortex_m, net):
    _, plain, samples, want = net
    target = load_target(TARGET)
    with tempfile.TemporaryDirectory(prefix="kiln-section-") as tmp:
        work = Path(tmp)
        fw = build_firmware(plain.files, "t", target, samples, work,
                            cflags=(f'-DKILN_ARENA_SECTION="{SECTION}"', "-DKILN_ARENA_ALIGN=32"),
                            link_script=_in_section)
        run_firmware(fw, work)
        got = read_outputs((work / OUTPUT_FILE).read_bytes(), fw.harness, len(samples))
        nm = subprocess.run([tool(target, "nm"), "-S", str(fw.elf)], capture_output=True, text=True).stdout
        sections = subprocess.run([tool(target, "objdump"), "-h", str(fw.elf)], capture_output=True, text=True).stdout
    _same(got, want)
    arena = re.search(r"^([0-9a-f]+) ([0-9a-f]+) [bBdD] t_arena_storage$", nm, re.M)
    start = re.search(r"^([0-9a-f]+) \w __kiln_sram2_start$", nm, re.M)
    assert arena and start and arena.group(1) == start.group(1)  # the arena opens the section
    assert int(arena.group(1), 16) % 32 == 0 and int(arena.group(2), 16) == plain.plan.arena_size
    (line,) = [ln for ln in sections.splitlines() if SECTION in ln]
    assert int(line.split()[2], 16) == plain.plan.arena_size  # the section holds the arena only


@pytest.mark.parametrize("opts", [{"arena": "caller"}, {"io_in_arena": True}, {"arena": "caller", "io_in_arena": True}],
                         ids=["caller", "io-in-arena", "caller+io"])
def test_caller_arena_and_io_in_arena_run_bit_exact(cortex_m, net, opts):
    g, plain, samples, want = net
    res = build_graph(g, target=TARGET, **opts)
    _same(run_generated(res.files, "t", samples, load_target(TARGET)), want)
    if opts.get("io_in_arena"):
        assert res.manifest["ram"]["total_bytes"] < plain.manifest["ram"]["total_bytes"]
