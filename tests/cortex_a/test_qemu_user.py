"""Cortex-A targets end to end: `kiln verify`, `run` and `profile` build a static AArch64
executable and run it under qemu-aarch64; the counting plugin recognises the A64 marker and
its counts are exact and repeatable; every MLPerf Tiny model verifies on the A53 and A55
(slow)."""

from __future__ import annotations

import pytest

from codegen.cli import main
from codegen.targets import load_target, with_kernels
from codegen.verify.profile import profile_generated_user as profile_generated
from codegen.verify.samples import random_samples
from cortex_a_testing import build
from helpers import check_kiln_verify_and_run, check_mlperf_model
from ops.linear_testing import int8_layer, merge  # tests/ops, a namespace package beside this folder

pytestmark = pytest.mark.usefixtures("cortex_a")


def test_kiln_verify_and_run_on_cortex_a53(models_dir, tmp_path, capsys):
    check_kiln_verify_and_run(models_dir, tmp_path, capsys, "cortex-a53", 2)


def test_kiln_profile_on_cortex_a55(models_dir, capsys):
    model = models_dir / "kws_ref_model.tflite"
    assert main(["profile", str(model), "--target", "cortex-a55"]) == 0
    report = capsys.readouterr().out
    assert "qemu-aarch64 -cpu cortex-a76" in report and "neon_dotprod" in report and "total" in report


def test_sanitize_is_refused_on_cortex_a(models_dir, capsys):
    assert main(["verify", str(models_dir / "ad01_int8.tflite"), "--target", "cortex-a53", "--sanitize"]) == 2
    assert "host target only" in capsys.readouterr().err


def test_profile_counts_each_call_exactly_and_repeatably(insn_plugin):
    """Per-call counts add up to the inference (the harness's markers add the model's return),
    two samples cost the same to the instruction (the NEON kernels have no data-dependent
    branches), and the NEON kernels take fewer instructions than the reference C at -O3."""
    g, _, _ = merge([int8_layer("Conv2D", (1, 6, 6, 16), (16, 3, 3, 16), seed=1, pads=(1, 1, 1, 1)),
                     int8_layer("DepthwiseConv2D", (1, 6, 6, 16), (1, 3, 3, 16), seed=2, pads=(1, 1, 1, 1)),
                     int8_layer("FullyConnected", (1, 64), (10, 64), seed=3)])
    totals = {}
    for kernels in ("neon", "reference"):
        target = with_kernels(load_target("cortex-a53"), (kernels,))
        res = build(g, target)
        feeds = random_samples(res.manifest["inputs"], 2, seed=4)
        prof = profile_generated(res.files, "t", res.manifest, target, feeds, plugin=insn_plugin)
        assert len(prof.calls) == len(res.manifest["fusion_groups"])
        assert all(min(c.instructions) > 0 for c in prof.calls)
        for k in range(2):
            assert 0 < prof.totals[k] - sum(c.instructions[k] for c in prof.calls) < 50
        if kernels == "neon":
            assert prof.totals[0] == prof.totals[1]
            assert {c.variant for c in prof.calls if c.kernel.endswith("_s8")} == {"neon"}
        totals[kernels] = prof.totals[0]
    assert totals["neon"] * 3 < totals["reference"]


def test_plugin_counts_equal_a_single_step_trace(tmp_path, insn_plugin):
    """Every executed guest instruction is one trace line with -singlestep: the plugin's total
    and the position of each A64 marker (hint #127) in the trace are its counts, exactly."""
    import re
    import subprocess

    from codegen.verify import host
    from codegen.verify.profile import MARKS_FILE, split_marks
    from codegen.verify.qemu_user import build_executable, launcher

    g, _, _ = merge([int8_layer("Conv2D", (1, 4, 4, 16), (8, 3, 3, 16), seed=1, pads=(1, 1, 1, 1))])
    res = build(g, "cortex-a53")
    target = load_target("cortex-a53")
    feeds = random_samples(res.manifest["inputs"], 2, seed=1)
    exe, _ = build_executable(res.files, "t", target, tmp_path, profile=True)
    host.run_samples(exe, res.manifest, feeds, tmp_path,
                     launcher=launcher(target, [str(insn_plugin), f"out={tmp_path / MARKS_FILE}"]))
    text = (tmp_path / MARKS_FILE).read_text()
    marks = [m for chunk in split_marks(text, len(res.manifest["fusion_groups"]), 2) for m in chunk]
    total = int(re.search(r"total (\d+)", text).group(1))

    trace = tmp_path / "trace"
    host.run_samples(exe, res.manifest, feeds, tmp_path,
                     launcher=launcher(target) + ("-singlestep", "-d", "exec,nochain", "-D", str(trace)))
    dump = subprocess.run(["aarch64-linux-gnu-objdump", "-d", str(exe)], capture_output=True, text=True).stdout
    marker_pcs = {int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+d5032fff\s", dump, re.M)}
    assert marker_pcs
    at_markers, n = [], 0
    for line in trace.read_text().splitlines():
        if line.startswith("Trace"):
            n += 1
            if int(line.split("[")[1].split("/")[1], 16) in marker_pcs:
                at_markers.append(n)
    assert n == total
    assert at_markers == marks


MLPERF = ["kws_ref_model.tflite", "kws_ref_model_float32.tflite", "vww_96_int8.tflite", "vww_96_float.tflite",
          "pretrainedResnet_quant.tflite", "pretrainedResnet.tflite", "ad01_int8.tflite", "ad01_fp32.tflite",
          "str_ww_ref_model.tflite"]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cortex-a53", "cortex-a55", "cortex-a72", "cortex-a76"])
@pytest.mark.parametrize("model", MLPERF)
def test_mlperf_model_on_cortex_a(models_dir, model, target):
    check_mlperf_model(models_dir, model, target)
