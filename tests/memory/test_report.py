"""The memory report: an SVG of the arena over time naming every buffer, and the figures."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from codegen.cli import main
from codegen.memory import Buffer, plan_memory
import pytest

from codegen.memory.report import FLASH_PX, StepInfo, label_lines, memory_markdown, memory_svg, short_label

SVG = "{http://www.w3.org/2000/svg}"


def _bufs():
    return [Buffer("conv<1>&a", 4096, 0, 1), Buffer("relu_1", 2048, 1, 2), Buffer("pool", 1024, 2, 3),
            Buffer("scratch_1_3", 512, 1, 1), Buffer("fc;model/dense/MatMul", 10, 3, 4)]


def test_svg_parses_and_has_one_labelled_rectangle_per_buffer():
    bufs = _bufs()
    plan = plan_memory(bufs, "greedy")
    text = memory_svg(plan, bufs, "net")
    root = ET.fromstring(text)  # well-formed XML: names are escaped
    groups = root.findall(f"{SVG}g")
    assert len(groups) == len(bufs)
    tooltips = [g.find(f"{SVG}title").text for g in groups]
    for b in bufs:
        assert sum(t.startswith(f"{b.name}: {b.size} B at offset {plan.offsets[b.name]}") for t in tooltips) == 1
    labels = {"".join(g.find(f"{SVG}text").itertext()) for g in groups}
    assert {"conv<1>&a", "relu_1", "pool", "scratch_1_3", "fc"} == labels
    # Rectangles stay inside the plot, and the tallest reaches the arena top.
    plot = root.findall(f"{SVG}rect")[1]
    top, bottom = float(plot.get("y")), float(plot.get("y")) + float(plot.get("height"))
    rects = [g.find(f"{SVG}rect") for g in groups]
    assert all(top - 0.01 <= float(r.get("y")) and float(r.get("y")) + float(r.get("height")) <= bottom + 0.01
               for r in rects)
    assert min(float(r.get("y")) for r in rects) == top


def test_svg_and_markdown_are_deterministic_and_state_the_figures():
    bufs = _bufs()
    plan = plan_memory(bufs, "auto")
    assert memory_svg(plan, bufs, "net") == memory_svg(plan_memory(bufs, "auto"), bufs, "net")
    md = memory_markdown(plan, bufs, "net", svg_file="net.memory.svg")
    assert f"- arena: {plan.arena_size} B" in md
    assert f"- lower bound (largest live total): {plan.lower_bound} B" in md
    assert f"- sum of buffer sizes: {sum(b.size for b in bufs)} B (5 buffers)" in md
    assert f"- planner: {plan.planner}, status {plan.status}" in md
    assert "![arena over time](net.memory.svg)" in md
    assert all(f"| {b.name} | {b.size} | {plan.offsets[b.name]} |" in md for b in bufs)


def test_build_writes_the_svg_and_honours_planner_options(tmp_path, models_dir, capsys):
    model = models_dir / "ad01_int8.tflite"  # greedy is above the bound here: the solver runs
    outs = {}
    for planner in ("greedy", "cpsat", "auto"):
        out = tmp_path / planner
        assert main(["build", str(model), "--target", "host", "-o", str(out), "--name", "ad",
                     "--planner", planner, "--time-limit", "5"]) == 0
        outs[planner] = out
        ET.fromstring((out / "ad.memory.svg").read_text())
    import json

    m = {p: json.loads((o / "ad.manifest.json").read_text()) for p, o in outs.items()}
    assert m["greedy"]["arena_bytes"] > m["cpsat"]["arena_bytes"] == m["cpsat"]["arena_lower_bound_bytes"]
    assert (m["auto"]["planner"], m["auto"]["planner_status"]) == ("cpsat", "OPTIMAL")
    assert (m["greedy"]["planner"], m["greedy"]["planner_status"]) == ("greedy", "FEASIBLE")
    # A second build gives byte-identical files (no planning time in them).
    again = tmp_path / "again"
    assert main(["build", str(model), "--target", "host", "-o", str(again), "--name", "ad"]) == 0
    for f in outs["auto"].iterdir():
        assert (again / f.name).read_bytes() == f.read_bytes(), f.name
    assert main(["build", str(model), "--target", "host", "-o", str(again), "--time-limit", "0"]) == 2
    assert "--time-limit" in capsys.readouterr().err


def test_named_steps_slant_the_kernel_names_and_add_a_flash_panel():
    bufs = _bufs()
    plan = plan_memory(bufs, "greedy")
    steps = tuple(StepInfo(f"call_{k}", f"kernel_{k}_s8", "cortex_m_dsp", 100 * k, (f"node/{k}",)) for k in range(5))
    root = ET.fromstring(memory_svg(plan, bufs, "net", steps, code_bytes=1234))
    ticks = root.findall(f"{SVG}g[@class='step']")
    assert ["".join(t.find(f"{SVG}text").itertext()) for t in ticks] == [f"{k} kernel_{k}_s8" for k in range(5)]
    assert ticks[3].find(f"{SVG}title").text.startswith("step 3: call_3, kernel kernel_3_s8 (cortex_m_dsp), weights 300 B")
    assert all("rotate(-50" in t.find(f"{SVG}text").get("transform") for t in ticks)
    bars = root.findall(f"{SVG}g[@class='weights']")
    heights = [float(b.find(f"{SVG}rect").get("height")) for b in bars]
    assert len(bars) == 5 and heights[0] == 0 and heights == sorted(heights)
    code = root.find(f"{SVG}g[@class='code']/{SVG}rect")
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert any("weights 1,000 B" in t and "code about 1,234 B" in t for t in texts)
    # scaled to the largest weights; the larger code stops at the top, its figure written under it
    assert float(code.get("height")) == FLASH_PX == heights[-1] and heights[1] == pytest.approx(FLASH_PX / 4)
    assert any(t == "code 1,234 B" for t in texts)

    assert len(root.findall(f"{SVG}g[@class='buffer']")) == len(bufs)


def test_labels_keep_the_layer_name_and_wrap_in_narrow_rectangles():
    assert short_label("functional_1/activation_3/Relu;functional_1/bn/FusedBatchNormV3") == "activation_3/Relu"
    assert short_label("x" * 30) == "\u2026" + "x" * 19
    lines, font = label_lines("activation_3/Relu", 60, 200)
    assert lines == ("activation_3/", "Relu") and font > label_lines("activation_3/Relu", 60, 8)[1]
    assert label_lines("relu_1", 200, 40) == (("relu_1",), 11.0)
