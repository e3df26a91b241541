"""Fusion benchmark: what the fusion planner changes, measured, and its cost model checked.

Run from the repository root:  python -m bench.fusion  [--out bench/FUSION.md] [--calibrate]

1. Effect of fusion, per model (MLPerf Tiny and small test models with elementwise chains and
   inception-style branches, tests/fusion/fusion_models.py): kernel calls, arena bytes, host
   instructions (callgrind, the call of <name>_run) and Cortex-M4 instructions (QEMU, `kiln
   profile`'s plugin), with the planner off and on (its default, objective speed).
2. Declined fusions: candidates the cost model declines, built anyway (fusion mode "all") and
   measured, to show whether declining was right. Residual fusion on IC (bench/fusion_residual.py).
3. The cost model against measurement: predicted versus measured instructions of every
   kernel call of the MLPerf Tiny models on the Cortex-M4 (DSP kernels, and the portable
   reference kernels), Spearman rank correlation. `--calibrate` fits the per-op-class
   constants on a subset of the models (FIT_MODELS) and prints them for
   codegen/fusion/kernel_costs.toml; the report always scores the committed constants on all.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.fusion_residual import residual_section
from codegen.compiler import BuildResult, compile_model
from codegen.fusion.costmodel import class_constants, class_section, kernel_estimate, macs_per_insn
from codegen.fusion.target_cost import cost_params
from codegen.fusion.work import node_work
from codegen.ops.registry import OpKind
from codegen.options import CompileOptions
from codegen.targets import Target, load_target
from codegen.verify.host import build_host
from codegen.verify.profile import build_plugin, profile_generated
from codegen.verify.samples import random_samples
from codegen.verify.toolchain import ToolchainError

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT.parent / "shared" / "models" / "mlperf_tiny"
MLPERF = [("KWS int8", "kws_ref_model.tflite"), ("VWW int8", "vww_96_int8.tflite"),
          ("IC int8", "pretrainedResnet_quant.tflite"), ("AD int8", "ad01_int8.tflite"),
          ("streaming wake word int8", "str_ww_ref_model.tflite"),
          ("KWS float", "kws_ref_model_float32.tflite"), ("AD float", "ad01_fp32.tflite")]
# Calibration subset: the constants are fitted on these and checked on every model.
FIT_MODELS = ("kws_ref_model.tflite", "ad01_int8.tflite", "pretrainedResnet_quant.tflite",
              "kws_ref_model_float32.tflite")
CALIBRATION_MODELS = [f for _, f in MLPERF]
M4 = "cortex-m4"


def _test_models(folder: Path) -> list[tuple[str, Path]]:
    """The test models of tests/fusion/fusion_models.py, written into `folder`."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "fusion")]
    import onnx

    import fusion_models as fm

    made = [("chains float (swish, Mul-Add-Clip)", "chains.onnx", fm.float_chains()),
            ("elementwise DAG float", "ew_dag.onnx", fm.float_elementwise_dag()),
            ("inception 3x 1x1 float", "inception.onnx", fm.inception()),
            ("inception 1x1/3x3/5x5 float", "inception_mixed.onnx", fm.inception((1, 3, 5))),
            ("chain int8 (Add-Mul-Logistic-Mul-Sub)", "int8_chain.tflite", fm.int8_chain()),
            ("inception 2x 1x1 int8", "int8_inception.tflite", fm.int8_inception()),
            ("inception 1x1/3x3 int8", "int8_inception_mixed.tflite", fm.int8_inception((1, 3)))]
    out = []
    for label, fname, model in made:
        path = folder / fname
        if isinstance(model, bytes):
            path.write_bytes(model)
        else:
            onnx.save(model, path)
        out.append((label, path))
    return out


# -- measurement ---------------------------------------------------------------------------------

def _callgrind(build: BuildResult, work: Path, per_call: bool) -> list[int]:
    """Instructions inside <name>_run on the host (gcc -O2) under callgrind, one random input:
    the total, or (`per_call`) one count per kernel call, split at the marks of fusion_mark.h."""
    cflags = ("-O2", "-include", str(ROOT / "bench" / "harness" / "fusion_mark.h")) if per_call else ("-O2",)
    exe = build_host(build.files, build.name, work, cflags=cflags)
    (sample,) = random_samples(build.manifest["inputs"], 1, 0)
    with open(work / "in.bin", "wb") as f:
        for io in build.manifest["inputs"]:
            f.write(np.ascontiguousarray(sample[io["name"]]).tobytes())
    split = ["--dump-before=kiln_bench_mark"] if per_call else []
    subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={build.name}_run", *split,
                    "--callgrind-out-file=cg.out", str(exe), "in.bin", "out.bin", "1"],
                   cwd=work, capture_output=True, check=True)
    parts = sorted(work.glob("cg.out*"), key=lambda p: int(p.name.rsplit(".", 1)[1]) if p.name != "cg.out" else 1 << 30)
    counts = [int(re.search(r"^(?:totals|summary):\s+(\d+)", p.read_text(), re.M).group(1)) for p in parts]
    return counts if per_call else [sum(counts)]


def host_instructions(build: BuildResult) -> int:
    """Instructions of one inference on the host (callgrind, inside <name>_run), gcc -O2."""
    with tempfile.TemporaryDirectory(prefix="kiln-fusion-") as tmp:
        return _callgrind(build, Path(tmp), per_call=False)[0]


def host_call_counts(build: BuildResult) -> list[int]:
    """Instructions of each kernel call on the host (the mark call itself included)."""
    with tempfile.TemporaryDirectory(prefix="kiln-fusion-") as tmp:
        return _callgrind(build, Path(tmp), per_call=True)


def m4_instructions(build: BuildResult, target: Target, plugin: Path):
    samples = random_samples(build.manifest["inputs"], 1, 0)
    return profile_generated(build.files, build.name, build.manifest, target, samples, plugin=plugin)


@dataclass
class Effect:
    label: str
    source_nodes: int
    calls: dict  # mode -> kernel calls
    arena: dict  # mode -> arena bytes
    host: dict  # mode -> host instructions
    m4: dict  # mode -> M4 instructions
    fused: list  # groups the planner fused, on the host and on the M4
    declined: list


def measure_effect(label: str, path: Path, plugin: Path, modes=("off", "auto")) -> Effect:
    calls, arena, host, m4 = {}, {}, {}, {}
    plans = []
    previous, last = None, None
    for mode in modes:
        builds = {t: compile_model(path, CompileOptions(load_target(t), fusion=mode)) for t in ("host", M4)}
        b = builds["host"]
        if mode == "auto":
            plans = [builds[t].fusion for t in builds]
        same = previous is not None and all(_code(builds[t]) == _code(previous[t]) for t in builds)
        calls[mode] = len(b.manifest["fusion_groups"])
        arena[mode] = b.manifest["arena_bytes"]
        host[mode] = host[last] if same else host_instructions(b)
        m4[mode] = m4[last] if same else sum(m4_instructions(builds[M4], load_target(M4), plugin).totals)
        previous, last = builds, mode
    from codegen.frontends import load_model
    fused, declined = ([sum(d.fused == want for d in p.decisions if d.by == "planner") for p in plans]
                       for want in (True, False))
    return Effect(label, len(load_model(path, {}).nodes), calls, arena, host, m4, fused, declined)


def _code(b: BuildResult) -> dict:
    return {k: v for k, v in b.files.items() if not k.endswith((".json", ".md", ".svg"))}


# -- cost model vs measurement -------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    model: str
    node: str
    target: str  # "cortex-m4" or "cortex-m4 reference"
    family: str  # the calibration section that prices it (a kernel family, or target.<name>)
    kind: OpKind
    dtype: str
    features: tuple[float, ...]  # per FEATURES
    measured: int
    predicted: int


FEATURES = ("insns_per_call", "insns_per_mac_insn", "insns_per_output", "insns_per_access", "insns_per_tap",
            "insns_per_step")


def calibration_rows(path: Path, target: Target, label: str, target_label: str, plugin: Path) -> list[Row]:
    """One row per node that runs kernel calls: measured instructions (its calls' sum) and
    the cost model's estimate."""
    build = compile_model(path, CompileOptions(target))
    if target.runner == "host":  # callgrind, split at each call's mark
        counts = host_call_counts(build)
        per_call = [(g["call"], n) for g, n in zip(build.manifest["fusion_groups"], counts)]
        section = f"target.{target.name}"
    else:
        per_call = [(c.call, min(c.instructions)) for c in m4_instructions(build, target, plugin).calls]
        section = None
    params = cost_params(target)
    writer = {o: n for n in build.graph.nodes for o in n.outputs}
    by_cname = {c.cname: c for c in build.lowered.calls}
    measured: dict[str, int] = defaultdict(int)
    for cname, insns in per_call:
        call = by_cname.get(cname)
        if call is not None and call.writes and call.writes[0] in writer:
            measured[writer[call.writes[0]].name] += insns
    rows = []
    for n in build.graph.nodes:
        if n.name not in measured:
            continue
        work = node_work(n, build.graph)
        family, _ = class_section(params.family, work.kind, work.dtype)
        steps = len(work.steps)
        feats = (1.0, work.macs / macs_per_insn(params, work.dtype, family), float(work.out_elements),
                 float(work.accesses), float(work.taps), float(work.out_elements * steps))
        rows.append(Row(label, n.name, target_label, section or family, work.kind, work.dtype, feats, measured[n.name],
                        kernel_estimate(work, params).instructions))
    return rows


def spearman(a, b) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    def ranks(x):
        x = np.asarray(x, dtype=np.float64)
        order = np.argsort(x, kind="mergesort")
        r = np.empty(len(x))
        r[order] = np.arange(len(x), dtype=np.float64)
        for v in np.unique(x):
            r[x == v] = r[x == v].mean()
        return r
    ra, rb = ranks(a), ranks(b)
    return float(np.corrcoef(ra, rb)[0, 1])


def nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Non-negative least squares by active set elimination (a few features)."""
    free = list(range(a.shape[1]))
    while True:
        x = np.zeros(a.shape[1])
        if free:
            sol, *_ = np.linalg.lstsq(a[:, free], b, rcond=None)
            x[free] = sol
        neg = [i for i in free if x[i] < 0]
        if not neg:
            return x
        free.remove(min(neg, key=lambda i: x[i]))


def fit(rows: list[Row], call_overhead: int) -> dict[tuple[str, str, str], dict[str, float]]:
    """Constants per (family, kind, dtype), fitted to relative error (each row weighted by
    1/measured, so that small kernels count as much as large ones for the ranking)."""
    groups: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for r in rows:
        groups[(r.family, r.kind.value, r.dtype)].append(r)
    out = {}
    for key, rs in sorted(groups.items()):
        kind = OpKind(key[1])
        known = {}
        if kind == OpKind.OUT_ELEMWISE_FUSABLE:
            cols = [0, 1, 2, 3, 4]
        elif kind in (OpKind.ELEMENTWISE, OpKind.BROADCAST):
            # The loop and its loads/stores are the same fused or not: keep their constants and
            # fit the step's arithmetic, the part a fused kernel runs once per step.
            family = key[0].split(".")[-1] if key[0].startswith("target.") else key[0]
            c = class_constants(family if not key[0].startswith("target.") else "reference", kind, key[2],
                                key[0].split(".")[1] if key[0].startswith("target.") else "")
            known = {2: c["insns_per_output"], 3: c["insns_per_access"]}
            cols = [0, 5]
        else:
            cols = [0, 2]
        a = np.array([[r.features[c] for c in cols] for r in rs]) / np.array([[r.measured] for r in rs])
        b = np.array([r.measured - call_overhead - sum(v * r.features[k] for k, v in known.items()) for r in rs],
                     dtype=np.float64) / np.array([r.measured for r in rs])
        x = nnls(a, b)
        consts = {FEATURES[k]: round(float(v), 3) for k, v in known.items()}
        consts.update({FEATURES[c]: round(float(v), 3) for c, v in zip(cols, x)})
        if kind not in (OpKind.OUT_ELEMWISE_FUSABLE, OpKind.ELEMENTWISE, OpKind.BROADCAST):
            consts.update(insns_per_access=0.0, insns_per_step=0.0)
        out[key] = consts
    return out


def toml_sections(constants) -> str:
    lines = []
    for (family, kind, dtype), consts in constants.items():
        lines.append(f'[{family}."{kind}".{dtype}]')
        lines += [f"{k} = {v}" for k, v in consts.items()]
        lines.append("")
    return "\n".join(lines)


# -- report ---------------------------------------------------------------------------------------

def _n(x) -> str:
    return f"{x:,}"


def _delta(before: int, after: int) -> str:
    return "=" if before == after else f"{100.0 * (after - before) / before:+.1f}%"


def effect_table(effects: list[Effect]) -> list[str]:
    lines = ["| model | IR nodes imported | kernel calls off → on | arena B off → on | host instructions off → on | "
             "M4 instructions off → on | planner groups fused / declined (host; M4) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for e in effects:
        lines.append(f"| {e.label} | {e.source_nodes} | {e.calls['off']} → {e.calls['auto']} | "
                     f"{_n(e.arena['off'])} → {_n(e.arena['auto'])} | {_n(e.host['off'])} → {_n(e.host['auto'])} "
                     f"({_delta(e.host['off'], e.host['auto'])}) | {_n(e.m4['off'])} → {_n(e.m4['auto'])} "
                     f"({_delta(e.m4['off'], e.m4['auto'])}) | {e.fused[0]} / {e.declined[0]}; "
                     f"{e.fused[1]} / {e.declined[1]} |")
    return lines


def decline_table(effects: list[Effect]) -> list[str]:
    lines = ["| model | planner (auto): host / M4 instructions | every legal fusion (all): host / M4 | "
             "arena auto → all | declining was |",
             "|---|---:|---:|---:|---|"]
    for e in effects:
        right_host = e.host["auto"] <= e.host["all"]
        right_m4 = e.m4["auto"] <= e.m4["all"]
        verdict = ("right on both" if right_host and right_m4 else
                   "right on M4, wrong on host" if right_m4 else
                   "right on host, wrong on M4" if right_host else "wrong on both")
        lines.append(f"| {e.label} | {_n(e.host['auto'])} / {_n(e.m4['auto'])} | {_n(e.host['all'])} / "
                     f"{_n(e.m4['all'])} | {_n(e.arena['auto'])} → {_n(e.arena['all'])} | {verdict} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "FUSION.md")
    ap.add_argument("--calibrate", action="store_true", help="fit the constants on FIT_MODELS and print them")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="kiln-fusion-bench-"))
    plugin = build_plugin(work)
    m4 = load_target(M4)
    m4_ref = dataclasses.replace(m4, variants=("reference",))
    rows = []
    for f in CALIBRATION_MODELS:
        for t, label in ((m4, M4), (m4_ref, f"{M4} reference"), (load_target("host"), "host")):
            rows += calibration_rows(MODELS / f, t, f, label, plugin)
            print(f"calibration: {f} on {label}: {len(rows)} rows", flush=True)
    if args.calibrate:
        fitted = fit([r for r in rows if r.model in FIT_MODELS and r.target != "host"], cost_params(m4).call_overhead_insns)
        fitted.update(fit([r for r in rows if r.model in FIT_MODELS and r.target == "host"],
                          cost_params(load_target("host")).call_overhead_insns))
        print(toml_sections(fitted))
        return 0
    tests = _test_models(work)
    effects = []
    for label, f in MLPERF:
        effects.append(measure_effect(label, MODELS / f, plugin))
        print(f"effect: {label}", flush=True)
    for label, path in tests:
        effects.append(measure_effect(label, path, plugin))
        print(f"effect: {label}", flush=True)
    declined = [e for e in effects if any(e.declined)]
    decline_effects, unbuilt = [], []
    for e in declined:
        for label, p in tests:
            if label != e.label:
                continue
            try:
                decline_effects.append(measure_effect(e.label, p, plugin, modes=("off", "auto", "all")))
            except ToolchainError as err:  # reported under the table, not hidden
                unbuilt.append((e.label, next((x for x in str(err).splitlines() if "error:" in x), "compile error")))
    # Only where fusing everything builds other code than the plan (not a mere alternative split).
    decline_effects = [e for e in decline_effects if (e.host["auto"], e.m4["auto"]) != (e.host["all"], e.m4["all"])]
    ram = objective_ram(MODELS / "vww_96_int8.tflite", plugin)
    explain = explained([p for label, p in tests if p.name in ("chains.onnx", "inception_mixed.onnx")])
    residual = residual_section(MODELS, m4_instructions, plugin)
    args.out.write_text(report(effects, decline_effects, rows, ram, explain, residual, unbuilt))
    print(f"wrote {args.out}")
    return 0


def objective_ram(path: Path, plugin: Path) -> list[str]:
    """VWW for the Cortex-M4 with objective speed and ram: arena, instructions, the patch decision."""
    from codegen.fusion.explain import format_decision

    lines = ["| objective | arena B | M4 instructions | kernel calls |", "|---|---:|---:|---:|"]
    decision = []
    for objective in ("speed", "ram"):
        b = compile_model(path, CompileOptions(load_target(M4), optimize=objective))
        insns = sum(m4_instructions(b, load_target(M4), plugin).totals)
        lines.append(f"| {objective} | {_n(b.manifest['arena_bytes'])} | {_n(insns)} | {len(b.manifest['fusion_groups'])} |")
        decision += [format_decision(d) for d in b.fusion.decisions if d.kind == "patch"]
        decision += [f"  search: {s}" for s in b.fusion.searches if s.startswith("patch")]
    return lines + ["", "```", *decision, "```"]


NOTES_EFFECT = [
    "*IR nodes imported*: operators after import (the ONNX frontend's layout transposes included); *kernel "
    "calls off*: after the optimisation passes, which already fold activations, Pads, Q/DQ pairs and "
    "per-channel affine ops (`--explain-fusion` lists those groups with their cost, marked by the pass); "
    "*on*: after the planner's chains, horizontal merges and residual epilogues. Of the MLPerf Tiny models "
    "only IC (ResNet) gives the planner something: its three residual Adds go into a convolution's epilogue "
    "(next section but one); TFLite already fuses bias and activation into every convolution and the others "
    "have no residual Adds, elementwise chains nor parallel branches into a Concat, so their code is "
    "byte-identical with the planner on. The test models are tests/fusion/fusion_models.py.", ""]


def explained(paths: list[Path]) -> list[str]:
    """`kiln build --target cortex-m4 --explain-fusion` of some test models."""
    from codegen.fusion.explain import format_plan

    out = []
    for path in paths:
        b = compile_model(path, CompileOptions(load_target(M4)))
        out += [f"`kiln build {path.name} --target {M4} --explain-fusion`:", "", "```", format_plan(b.fusion).rstrip(), "```", ""]
    return out


NOTES_LIMITS = [
    "## Limits", "",
    "- One set of constants per (kernel family or target, op kind, dtype): convolution, depthwise, fully "
    "connected and pooling share theirs and differ through their MACs, outputs, window taps and accesses "
    "only. The ranks hold (ρ above); single kernels can be off by 2-3x (the portable int8 convolution with "
    "one input channel, host float kernels that gcc vectorises).",
    "- Elementwise and broadcast constants: int8 broadcast steps are fitted (IC's residual Adds); the float "
    "steps and the int8 table look-ups are estimates read off the kernels' C (the MLPerf Tiny models have "
    "none), checked only through the test models' measured effect above.",
    "- The int8 1x1 + 3x3 branches: the planner declines on both targets; on the M4 that is right (fusing "
    "costs 1.8 % more), on the host fusing would have saved 10 %: the host's portable int8 convolution "
    "spends more per output than per zero tap at 8 input channels, which the constants fitted on the MLPerf "
    "models price the other way.",
    "- Residual epilogues (`insns_per_epilogue`): measured on IC's three fused layers, the only MLPerf Tiny "
    "model with residual Adds, so the section above checks them on the layers they were read from. The "
    "fused kernel exists for the DSP, Helium (cortex-m55: its epilogue measured there) and the portable "
    "reference variants; on NEON targets the planner offers none (a fused variant there is future work).", ""]


def report(effects, decline_effects, rows: list[Row], ram: list[str], explain: list[str], residual: list[str],
           unbuilt: list[tuple[str, str]]) -> str:
    import platform

    from codegen import __version__
    head = ["# Fusion: planner effect, declined fusions, cost model vs measurement", "",
            f"Command: `python -m bench.fusion` (from the repository root; Kiln {__version__}, Python "
            f"{platform.python_version()}). Host: gcc `-O2`, instructions of one `<name>_run` under callgrind. "
            "Cortex-M4: the `cortex-m4` target (DSP kernels) on QEMU mps2-an386, exact instructions of one "
            "inference from `kiln profile`'s plugin. Random inputs, seed 0. *off*: the optimisation passes' "
            "folds only (activation, Pad, Q/DQ, affine — they run in every build); *on*: the fusion planner's "
            "default (objective speed) on top.", ""]
    out = head + ["## Effect of fusion", ""] + effect_table(effects) + [""] + NOTES_EFFECT
    out += ["## Declined fusions, built anyway and measured", "",
            "The planner's decision (*auto*) against fusing every legal candidate (fusion mode *all*).", ""]
    out += decline_table(decline_effects) + [""]
    out += [f"Not measured: {label}, whose build with every fusion does not compile for the M4 (`{msg.strip()}`)."
            for label, msg in unbuilt] + ([""] if unbuilt else [])
    out += residual
    out += ["## Objective ram: memory-driven fusion (VWW int8, Cortex-M4)", "",
            "With `--optimize ram` the planner asks codegen/fusion/patch.py for a patch-based first stage and "
            "takes it when the planned arena drops (the recomputed halo counted in MACs); `--explain-fusion` "
            "prints the decision below.", ""] + ram + [""]
    out += ["## What `--explain-fusion` prints", ""] + explain
    out += cost_section(rows) + NOTES_LIMITS
    return "\n".join(out) + "\n"


def cost_section(rows: list[Row]) -> list[str]:
    m4 = [r for r in rows if r.target != "host"]
    host = [r for r in rows if r.target == "host"]
    out = ["## Cost model against measurement (per kernel)", "",
           f"Every node that runs kernel calls in the MLPerf Tiny models ({len(m4)} rows on the Cortex-M4: "
           f"{len({r.model for r in rows})} models, DSP kernels and the portable reference kernels, counted by "
           f"`kiln profile`'s plugin; {len(host)} rows on the host, callgrind split at a mark after each call, "
           "bench/harness/fusion_mark.h). Constants of codegen/fusion/kernel_costs.toml fitted on "
           f"{', '.join(FIT_MODELS)} (`python -m bench.fusion --calibrate`), checked on all.", "",
           "| rows | Spearman ρ (predicted vs measured) | median abs. relative error |", "|---|---:|---:|"]
    for label, rs in (("Cortex-M4, all", m4), ("Cortex-M4, held out (not in the fit)", [r for r in m4 if r.model not in FIT_MODELS]),
                      ("Cortex-M4, DSP kernels", [r for r in m4 if "reference" not in r.target]),
                      ("Cortex-M4, reference kernels", [r for r in m4 if "reference" in r.target]),
                      ("host, all", host), ("host, held out", [r for r in host if r.model not in FIT_MODELS])):
        if len(rs) > 2:
            err = np.median([abs(r.predicted - r.measured) / r.measured for r in rs])
            out.append(f"| {label} ({len(rs)}) | {spearman([r.predicted for r in rs], [r.measured for r in rs]):.3f} | "
                       f"{100 * err:.0f}% |")
    out += ["", "| model | target | node | kind | dtype | predicted | measured | ratio |", "|---|---|---|---|---|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r.model} | {r.target} | {r.node[:40]} | {r.kind.value} | {r.dtype} | {_n(r.predicted)} | "
                   f"{_n(r.measured)} | {r.predicted / r.measured:.2f} |")
    return out + [""]


if __name__ == "__main__":
    raise SystemExit(main())
