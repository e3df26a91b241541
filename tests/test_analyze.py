"""`kiln analyze`: one row per kernel call with the kernel and variant chosen, MACs, weights,
activation bytes, the cost model's estimate and, with --profile, the counted instructions; its
totals agree with the manifest and `kiln inspect`, in the table, CSV and JSON formats."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from codegen.analyze import analyze_model, format_analysis, layers_of
from codegen.cli import main as kiln
from codegen.compiler import compile_model
from codegen.inspect import inspect_model
from codegen.options import CompileOptions
from codegen.targets import load_target

TINY = Path(__file__).resolve().parent / "golden" / "models" / "tiny_int8.tflite"


@pytest.fixture(scope="module")
def m4_build():
    return compile_model(TINY, CompileOptions(load_target("cortex-m4")))


def test_one_row_per_call_with_its_kernel_and_totals_matching_the_manifest(m4_build):
    layers = layers_of(m4_build)
    groups = m4_build.manifest["fusion_groups"]
    assert [(x.call, x.kernel) for x in layers] == [(g["call"], g["kernel"]) for g in groups]
    assert sum(x.weights_bytes for x in layers) == m4_build.manifest["weights_bytes"]
    conv = layers[0]
    assert conv.ops == "Conv2D" and conv.variant == "cortex_m_dsp" and conv.macs > 0 and conv.weights_bytes > 0
    assert conv.act_in_bytes == 72  # the int8 input [1, 6, 6, 2]
    for prev, nxt in zip(layers, layers[1:]):  # a chain: each call reads what the previous wrote
        assert nxt.act_in_bytes == prev.act_out_bytes
    assert all(x.est_instructions > 0 and x.est_cycles >= x.est_instructions for x in layers)
    report, _ = inspect_model(TINY, {})
    assert f"MACs per inference: {sum(x.macs for x in layers):,}" in report


def test_csv_and_json_carry_the_same_rows_and_totals():
    analysis = analyze_model(TINY, CompileOptions(load_target("cortex-m4")))
    rows = list(csv.DictReader(io.StringIO(format_analysis(analysis, "csv"))))
    doc = json.loads(format_analysis(analysis, "json"))
    assert len(rows) == len(doc["layers"]) + 1 and rows[-1]["index"] == "total"
    assert int(rows[-1]["weights_bytes"]) == doc["totals"]["weights_bytes"] == doc["weights_bytes"]
    assert [r["kernel"] for r in rows[:-1]] == [x["kernel"] for x in doc["layers"]]
    assert doc["totals"]["measured_instructions"] is None and rows[0]["measured_instructions"] == ""
    table = format_analysis(analysis, "table")
    assert "measured insns" not in table and table.splitlines()[-2].split()[0] == "total"


def test_profile_adds_the_counted_instructions_per_call(capsys):
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("qemu-system-arm or arm-none-eabi-gcc not found")
    assert kiln(["analyze", str(TINY), "--target", "cortex-m4", "--profile", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    measured = [x["measured_instructions"] for x in doc["layers"]]
    assert all(m > 0 for m in measured)
    assert sum(measured) == doc["totals"]["measured_instructions"] <= doc["measured_total_instructions"]


def test_profile_on_the_host_is_one_clear_error(capsys):
    assert kiln(["analyze", str(TINY), "--target", "host", "--profile"]) == 2
    err = capsys.readouterr().err
    assert "needs an emulated board; target 'host' has none" in err and len(err.strip().splitlines()) == 1
