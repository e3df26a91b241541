"""The fusion planner: candidates, legality, search, decisions, explanation, manifest."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import fusion_models as fm
from codegen.errors import KilnError
from codegen.frontends import load_model
from codegen.fusion.candidates import chain_candidates, convex
from codegen.fusion.explain import format_plan
from codegen.fusion.planner import plan_fusion
from codegen.ir.builder import GraphBuilder
from codegen.ir.interpreter import run_graph
from codegen.passes.pipeline import run_pipeline
from codegen.targets import load_target

HOST = load_target("host")


def _graphs(tmp_path: Path, model, name: str):
    path = tmp_path / (f"{name}.tflite" if isinstance(model, bytes) else f"{name}.onnx")
    if isinstance(model, bytes):
        path.write_bytes(model)
    else:
        onnx.save(model, path)
    source = load_model(path, {})
    return source, run_pipeline(source)


def _feeds(g, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for name in g.inputs:
        v = g.values[name]
        feeds[name] = (rng.integers(-128, 128, v.shape).astype(np.int8) if v.dtype == "int8"
                       else rng.standard_normal(v.shape).astype(np.float32))
    return feeds


def _same_outputs(before, after, feeds):
    a, b = run_graph(before, feeds), run_graph(after, feeds)
    for k in a:
        if a[k].dtype == np.int8:
            np.testing.assert_array_equal(a[k], b[k])
        else:
            np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6)


def test_float_chain_is_fused_and_keeps_the_results(tmp_path):
    source, g = _graphs(tmp_path, fm.float_chains(), "chains")
    plan = plan_fusion(g, HOST, source=source)
    chains = [d for d in plan.decisions if d.kind == "chain" and d.fused]
    assert chains and all(d.fused_cost.calls == 1 < d.unfused_cost.calls for d in chains)
    assert any(n.op == "FusedElementwise" for n in plan.graph.nodes)
    assert len(plan.graph.nodes) < len(g.nodes)
    assert any(s.startswith("DP over a chain") for s in plan.searches)
    _same_outputs(g, plan.graph, _feeds(g))


def test_the_passes_groups_are_reported(tmp_path):
    source, g = _graphs(tmp_path, fm.float_chains(), "chains")
    plan = plan_fusion(g, HOST, source=source)
    passes = [d for d in plan.decisions if d.by != "planner"]
    assert any("epilogue" in d.kind and "fuse_activation" in d.by for d in passes)  # Add + Clip(0, 6)
    assert all(d.fused and d.fused_cost.calls == 1 for d in passes)


def test_dag_is_partitioned_by_the_search(tmp_path):
    source, g = _graphs(tmp_path, fm.float_elementwise_dag(), "dag")
    plan = plan_fusion(g, HOST, source=source)
    assert any(s.startswith("CP-SAT partition") for s in plan.searches)
    fused = [set(d.nodes) for d in plan.decisions if d.kind == "chain" and d.fused]
    assert len(fused) >= 2 and all(not (a & b) for i, a in enumerate(fused) for b in fused[i + 1:])
    _same_outputs(g, plan.graph, _feeds(g))


def test_int8_chain_keeps_every_bit(tmp_path):
    source, g = _graphs(tmp_path, fm.int8_chain(), "int8_chain")
    for mode in ("auto", "all"):
        plan = plan_fusion(g, HOST, source=source, mode=mode)
        assert any(n.op == "FusedElementwise" for n in plan.graph.nodes)
        _same_outputs(g, plan.graph, _feeds(g, 1))


@pytest.mark.parametrize("mode, fused_ops", [("off", 0), ("auto", None), ("all", 1)])
def test_modes(tmp_path, mode, fused_ops):
    source, g = _graphs(tmp_path, fm.float_chains(), "chains")
    plan = plan_fusion(g, HOST, source=source, mode=mode)
    fused = sum(n.op == "FusedElementwise" for n in plan.graph.nodes)
    if fused_ops is not None:
        assert fused == fused_ops
    if mode == "off":
        assert plan.graph is g and any(not d.fused for d in plan.decisions)


def test_horizontal_fusion_of_1x1_branches(tmp_path):
    source, g = _graphs(tmp_path, fm.inception(), "inception")
    plan = plan_fusion(g, HOST, source=source)
    (h,) = [d for d in plan.decisions if d.kind == "horizontal"]
    assert h.fused and h.fused_cost.cycles < h.unfused_cost.cycles
    assert not any(n.op == "Concat" for n in plan.graph.nodes)
    _same_outputs(g, plan.graph, _feeds(g))


def test_horizontal_fusion_that_pads_kernels_is_declined(tmp_path):
    source, g = _graphs(tmp_path, fm.inception((1, 3, 5)), "mixed")
    plan = plan_fusion(g, HOST, source=source)
    (h,) = [d for d in plan.decisions if d.kind == "horizontal"]
    assert not h.fused and "zero taps" in h.reason
    assert h.fused_cost.cycles > h.unfused_cost.cycles
    forced = plan_fusion(g, HOST, source=source, mode="all")
    assert not any(n.op == "Concat" for n in forced.graph.nodes)
    _same_outputs(g, forced.graph, _feeds(g))  # legal, only slower


def test_int8_horizontal_fusion_is_bit_exact(tmp_path):
    source, g = _graphs(tmp_path, fm.int8_inception(), "int8_inception")
    plan = plan_fusion(g, HOST, source=source, mode="all")
    assert [d.fused for d in plan.decisions if d.kind == "horizontal"] == [True]
    _same_outputs(g, plan.graph, _feeds(g, 2))


def _chain_graph(extra_reader: bool = False, output_inside: bool = False):
    b = GraphBuilder("t")
    x = b.input("x", "float32", (1, 8))
    y = b.input("y", "float32", (1, 8))
    h = b.node("Mul", [x, y])
    t = b.node("Tanh", [h])
    z = b.node("Neg", [t])
    outs = [z]
    if extra_reader:
        outs.append(b.node("Exp", [h]))  # the Mul's output has a reader outside the chain
    if output_inside:
        outs.append(t)
    for o in outs:
        b.output(o)
    return b.build()


@pytest.mark.parametrize("extra_reader, output_inside, longest", [
    (False, False, 3),  # Mul -> Tanh -> Neg
    (True, False, 2),  # Mul read twice: no recomputation, the chain starts after it
    (False, True, 2),  # Tanh's output is a graph output: it must be written, the chain stops at it
])
def test_chain_legality(extra_reader, output_inside, longest):
    g = _chain_graph(extra_reader, output_inside)
    cands = [c for comp in chain_candidates(g) for c in comp]
    assert max(len(c.nodes) for c in cands) == longest


def test_convexity():
    b = GraphBuilder("t")
    x = b.input("x", "float32", (1, 8))
    a = b.node("Tanh", [x], name="a")
    m = b.node("Exp", [a], name="m")
    c = b.node("Add", [a, m], name="c")
    g = b.output(c).build()
    assert convex(g, {"a", "m", "c"}) and convex(g, {"m", "c"})
    assert not convex(g, {"a", "c"})  # a -> m -> c leaves the group and comes back


def test_bad_objective_and_mode_are_one_line_errors(tmp_path):
    g = _chain_graph()
    with pytest.raises(KilnError, match="objective"):
        plan_fusion(g, HOST, "latency")
    with pytest.raises(KilnError, match="mode"):
        plan_fusion(g, HOST, mode="some")


@pytest.mark.parametrize("objective", ["speed", "size", "ram"])
def test_objectives(objective):
    plan = plan_fusion(_chain_graph(), HOST, objective, patch=False)
    (d,) = [d for d in plan.decisions if d.kind == "chain"]
    if objective == "size":  # a new function costs more flash than two params structs save
        assert not d.fused and d.fused_code > d.unfused_code
    else:
        assert d.fused and d.fused_cost.arena_bytes < d.unfused_cost.arena_bytes


def test_explain_and_manifest(tmp_path):
    source, g = _graphs(tmp_path, fm.inception((1, 3)), "mixed")
    plan = plan_fusion(g, HOST, source=source)
    text = format_plan(plan)
    assert "[decline] horizontal" in text and "cycles" in text and "zero taps" in text
    assert text.count("\n      ") >= 2 * len(plan.decisions)
    groups = plan.manifest()["groups"]
    assert len(groups) == len(plan.decisions)
    assert {"kind", "nodes", "fused", "reason", "estimate_fused", "estimate_unfused"} <= set(groups[0])


def test_cli_explains_the_plan_and_the_manifest_lists_it(tmp_path, capsys):
    import json

    from codegen.cli import main

    onnx.save(fm.float_chains(), tmp_path / "chains.onnx")
    out = tmp_path / "gen"
    assert main(["build", str(tmp_path / "chains.onnx"), "--target", "cortex-m4", "-o", str(out),
                 "--optimize", "size", "--explain-fusion"]) == 0
    text = capsys.readouterr().out
    assert "objective size" in text and "[decline] chain" in text and "flash" in text
    manifest = json.loads((out / "chains.manifest.json").read_text())
    assert manifest["fusion_plan"]["objective"] == "size"
    assert any(g["kind"] == "chain" and not g["fused"] for g in manifest["fusion_plan"]["groups"])


def test_pad_and_activation_folds_are_reported_as_groups():
    b = GraphBuilder("padconv")
    x = b.input("x", "float32", (1, 8, 8, 4))
    h = b.node("Pad", [x], name="pad", pads=(0, 1, 1, 0, 0, 1, 1, 0))
    w = b.const("w", np.random.default_rng(0).standard_normal((4, 3, 3, 4)).astype(np.float32))
    h = b.node("Conv2D", [h, w], name="conv")
    source = b.output(b.node("Clip", [h], name="relu", min=0.0)).build()
    g = run_pipeline(source)
    (d,) = [d for d in plan_fusion(g, HOST, source=source).decisions if "pad" in d.kind]
    assert d.kind == "epilogue+pad" and set(d.nodes) == {"pad", "conv", "relu"}
    assert "fold_pad" in d.by and "fuse_activation" in d.by
    assert d.fused_cost.calls == 1 and d.fused_cost.cycles < d.unfused_cost.cycles


@pytest.mark.parametrize("objective, ram_limit, taken", [("ram", None, True), ("speed", 1, True),
                                                         ("speed", None, None)])
def test_patch_stage_is_proposed_for_ram(monkeypatch, objective, ram_limit, taken):
    """The planner asks codegen/fusion/patch.py (its interface only) and applies what lowers the arena."""
    from types import SimpleNamespace

    from codegen.fusion import patch

    g = _chain_graph()
    proposal = SimpleNamespace(nodes=("mul", "tanh"), tiles=2, peak_ram_before=4096, peak_ram_after=1024, extra_macs=64)
    applied = []
    monkeypatch.setattr(patch, "propose_patch_stage", lambda graph, arena: proposal)
    monkeypatch.setattr(patch, "apply_patch_stage", lambda graph, cand: applied.append(cand) or graph)
    plan = plan_fusion(g, HOST, objective, ram_limit=ram_limit, mode="off", arena=lambda graph: 4096)
    decisions = [d for d in plan.decisions if d.kind == "patch"]
    if taken is None:
        assert not decisions and not applied
    else:
        (d,) = decisions
        assert d.fused and applied == [proposal] and (d.arena_before, d.arena_after) == (4096, 1024)
        assert d.unfused_cost.calls == 2 and d.fused_cost.calls == 4  # one call per node and band
        assert "2 patches" in d.reason
