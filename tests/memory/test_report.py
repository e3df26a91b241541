"""The memory report: an SVG of the arena over time naming every buffer, and the figures."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from codegen.cli import main
from codegen.memory import Buffer, plan_memory
from codegen.memory.report import memory_markdown, memory_svg

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
    labels = {g.find(f"{SVG}text").text for g in groups}
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
