"""The residual fusion section of bench/FUSION.md: where a convolution took its ResNet block's
Add into its epilogue (codegen/fusion/residual.py), instructions and arena with and without, and
the cost model's prediction against the measurement, per fused layer, on the Cortex-M4 with the
DSP kernels and with the portable reference kernels. Called by bench/fusion.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from codegen.compiler import BuildResult, compile_model
from codegen.options import CompileOptions
from codegen.targets import load_target

MODEL = "pretrainedResnet_quant.tflite"


def _per_node(build: BuildResult, profile) -> dict[str, int]:
    """Measured instructions of each node's calls (the node that writes the call's output)."""
    writer = {o: n.name for n in build.graph.nodes for o in n.outputs}
    by_cname = {c.cname: c for c in build.lowered.calls}
    out: dict[str, int] = {}
    for c in profile.calls:
        call = by_cname.get(c.call)
        if call is not None and call.writes and call.writes[0] in writer:
            name = writer[call.writes[0]]
            out[name] = out.get(name, 0) + min(c.instructions)
    return out


def _n(x: int) -> str:
    return f"{x:,}"


def residual_section(models: Path, measure, plugin: Path) -> list[str]:
    """`measure(build, target, plugin)`: the profile of one inference (bench/fusion.py's)."""
    m4 = load_target("cortex-m4")
    totals = ["| kernels | M4 instructions off → on | arena B off → on | Adds fused |", "|---|---:|---:|---:|"]
    layers = ["| kernels | fused layer (its Add) | predicted unfused → fused | measured unfused → fused | "
              "predicted gain | measured gain |", "|---|---|---:|---:|---:|---:|"]
    for label, target in (("cortex_m_dsp", m4), ("reference", dataclasses.replace(m4, variants=("reference",)))):
        builds = {mode: compile_model(models / MODEL, CompileOptions(target, fusion=mode)) for mode in ("off", "auto")}
        profiles = {mode: measure(b, target, plugin) for mode, b in builds.items()}
        per = {mode: _per_node(builds[mode], profiles[mode]) for mode in builds}
        fused_nodes = {n.outputs[0]: n.name for n in builds["auto"].graph.nodes if n.op == "Conv2DAdd"}
        off_writer = {o: n.name for n in builds["off"].graph.nodes for o in n.outputs}
        decisions = [d for d in builds["auto"].fusion.decisions if d.kind == "residual"]
        for d in decisions:
            conv, add = d.nodes
            out = next(n.outputs[0] for n in builds["off"].graph.nodes if n.name == add)
            unfused = per["off"][conv] + per["off"][off_writer[out]]
            fused = per["auto"][fused_nodes[out]] if d.fused else unfused
            pu, pf = d.unfused_cost.instructions, d.fused_cost.instructions
            layers.append(f"| {label} | {add.split(';')[-1]} | {_n(pu)} → {_n(pf)} | {_n(unfused)} → {_n(fused)} | "
                          f"{100 * (pu - pf) / pu:.1f}% | {100 * (unfused - fused) / unfused:.1f}% |")
        insns = {mode: sum(p.totals) for mode, p in profiles.items()}
        arena = {mode: b.manifest["arena_bytes"] for mode, b in builds.items()}
        totals.append(f"| {label} | {_n(insns['off'])} → {_n(insns['auto'])} "
                      f"({100 * (insns['auto'] - insns['off']) / insns['off']:+.1f}%) | "
                      f"{_n(arena['off'])} → {_n(arena['auto'])} | {sum(d.fused for d in decisions)} / {len(decisions)} |")
    return ["## Residual fusion: a convolution with its block's Add in the epilogue (IC int8, Cortex-M4)", "",
            "codegen/fusion/residual.py offers each int8 Add whose input is a Conv2D read by it alone, where the "
            "variant that runs the convolution has a fused kernel (conv2d_add_s8: cortex_m_dsp, Helium and the "
            "portable reference; not NEON); the cost model decides. The fused kernel computes the convolution's "
            "int8 value as before, then TFLM's AddFunc with the residual: each input's rescaling to the common "
            "scale is a function of its int8 value, read from a 256-entry table made at compile time (2 KB of "
            "flash per layer, which objective size declines), the sum requantized once (SMMULR on the DSP kernel). "
            "The output may take the residual's place (each residual element is read before its output "
            "element is written) or overlap the convolution's input as the convolution alone does. Bit-exact: "
            "`kiln verify --target cortex-m4 --samples 20` and tests/fusion/test_residual.py (host and QEMU).", "",
            *totals, "", *layers, ""]
