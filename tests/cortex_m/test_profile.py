"""Exact instruction counts: the QEMU plugin's counts equal a one-instruction-per-block trace
of the same firmware, repeat to the instruction across runs, and `kiln profile` reports them
per kernel call and in total."""

from __future__ import annotations

import re
import subprocess

import pytest

from codegen.cli import main
from codegen.targets import load_target
from codegen.verify import qemu
from codegen.verify.firmware import build_firmware
from codegen.verify.profile import MARKS_FILE, profile_generated, split_marks
from codegen.verify.samples import random_samples
from cortex_m_testing import build, float_graph, int8_graph

pytestmark = pytest.mark.usefixtures("cortex_m")


def test_plugin_counts_equal_a_single_step_trace(tmp_path, insn_plugin):
    """Every executed instruction is one trace line with -singlestep: the plugin's total and
    the position of each marker in the trace are the plugin's counts, exactly."""
    res = build(float_graph(), "cortex-m4")
    samples = random_samples(res.manifest["inputs"], 2, seed=1)
    fw = build_firmware(res.files, "t", load_target("cortex-m4"), samples, tmp_path, profile=True)
    qemu.run_firmware(fw, tmp_path, plugin=[str(insn_plugin), f"out={tmp_path / MARKS_FILE}"])
    text = (tmp_path / MARKS_FILE).read_text()
    marks = [m for chunk in split_marks(text, len(res.manifest["fusion_groups"]), 2) for m in chunk]
    total = int(re.search(r"total (\d+)", text).group(1))

    cmd = qemu.qemu_command(fw.board, fw.elf) + ["-singlestep", "-d", "exec,nochain", "-D", str(tmp_path / "trace")]
    proc = subprocess.run(cmd, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and "singlestep" in proc.stderr:
        pytest.skip("this QEMU has no -singlestep")
    assert proc.returncode == 0, proc.stderr
    dump = subprocess.run(["arm-none-eabi-objdump", "-d", str(fw.elf)], capture_output=True, text=True).stdout
    marker_pcs = {f"{int(m.group(1), 16):08x}" for m in re.finditer(r"^\s*([0-9a-f]+):\s+bf70\s", dump, re.M)}
    at_markers, n = [], 0
    for line in (tmp_path / "trace").read_text().splitlines():
        if line.startswith("Trace"):
            n += 1
            if line.split("[")[1].split("/")[1] in marker_pcs:
                at_markers.append(n)
    assert n == total
    assert at_markers == marks


# A bare firmware whose first marker is the last halfword of a 1 KiB page (QEMU's page size for
# M-profile): QEMU 7.2 then reports that 16-bit instruction with 4 bytes of data.
PAGE_END_FIRMWARE = """
    .syntax unified
    .thumb
    .section .text
    .global _start
    .word 0x20001000          @ initial stack pointer
    .word _start + 1          @ reset vector
_start:
    .rept 506                 @ 0x008..0x3fb
    nop
    .endr
    .inst.n 0xbf70            @ 0x3fc: marker, instruction 507
    movs r2, #1
    .inst.n 0xbf70            @ 0x400: marker, instruction 509
    ldr r1, =exit_block
    movs r0, #0x20            @ SYS_EXIT_EXTENDED
    bkpt 0xab                 @ instruction 512
exit_block:
    .word 0x20026, 7          @ application exit, status 7
"""


def test_marker_at_a_page_end_is_counted(tmp_path, insn_plugin):
    (tmp_path / "fw.S").write_text(PAGE_END_FIRMWARE)
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Ttext=0", "fw.S", "-o", "fw.elf"],
                   cwd=tmp_path, check=True, capture_output=True)
    cmd = [qemu.QEMU, "-M", "mps2-an386", "-cpu", "cortex-m4", "-nographic", "-semihosting-config",
           "enable=on,target=native", "-kernel", "fw.elf", "-plugin", f"{insn_plugin},out=marks.txt"]
    proc = subprocess.run(cmd, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 7, proc.stderr
    assert (tmp_path / "marks.txt").read_text().split("\n") == ["507", "509", "total 512", ""]


@pytest.mark.parametrize("target", ["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m55"])
def test_counts_repeat_exactly(target, insn_plugin):
    res = build(int8_graph(), target)
    samples = random_samples(res.manifest["inputs"], 2, seed=4)
    runs = [profile_generated(res.files, "t", res.manifest, load_target(target), samples, plugin=insn_plugin)
            for _ in range(2)]
    assert runs[0] == runs[1]
    p = runs[0]
    assert [c.kernel for c in p.calls] == [g["kernel"] for g in res.manifest["fusion_groups"]] == ["add_bcast_s8"] * 2
    variant = {"cortex-m0plus": "reference", "cortex-m55": "mve"}.get(target, "cortex_m_dsp")
    assert all(c.variant == variant for c in p.calls)
    for k in range(2):
        kernels = sum(c.instructions[k] for c in p.calls)
        # Every element costs instructions; the call into the model and its return a few more.
        assert 128 <= min(c.instructions[k] for c in p.calls) and kernels < p.totals[k] < kernels + 64


def test_kiln_profile_prints_each_call_and_the_total(models_dir, capsys):
    assert main(["profile", str(models_dir / "ad01_int8.tflite"), "--target", "cortex-m4"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+\s+\S+\s+\S+\s+cortex_m_dsp\s+[\d,]+\s+[\d.]+%$", line)]
    assert len(rows) == 10  # ten FULLY_CONNECTED layers
    counts = [int(r.split()[4].replace(",", "")) for r in rows]
    kernels = int(re.search(r"kernels\s+([\d,]+)", out).group(1).replace(",", ""))
    total = int(re.search(r"total \(call to return of the model\)\s+([\d,]+)", out).group(1).replace(",", ""))
    assert sum(counts) == kernels < total
    assert re.search(r"model: flash [\d,]+ B \(text [\d,]+, rodata [\d,]+", out)
    assert re.search(r"stack used [\d,]+ B", out)


def test_kiln_profile_needs_an_emulated_target(models_dir, capsys):
    assert main(["profile", str(models_dir / "ad01_int8.tflite"), "--target", "host"]) == 2
    assert "emulated board" in capsys.readouterr().err
