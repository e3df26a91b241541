"""The cost model's constants for the fast Cortex-M kernels, fitted on measured layers.

Run from the repository root:  python -m bench.cortex_m_costs  [--fit] [--out bench/COST_FIT_CORTEX_M.md]
                                 [--measured FILE]  (keep the measured layers there, or read them back)

Every layer of the five MLPerf Tiny int8 models is built for the Cortex-M4 (DSP kernels) and
the Cortex-M55 (Helium kernels) and counted in QEMU (`kiln profile`'s plugin, one inference).
Each measured layer is priced by the kernel family that ran it (the call's variant: a layer
left to the portable kernels stays with the reference constants). `--fit` fits the per-op-class
constants of each fast family (codegen/fusion/costmodel.py's features; bench/fusion.py's
non-negative least squares, rows weighted by 1/sqrt(measured), so that the big layers that
make a model's total and the small ones that rank candidates both count) and prints them for
codegen/fusion/kernel_costs.toml; the report scores the committed constants: per model the
estimate `kiln analyze` gives against the measured total.
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.fusion import FEATURES, nnls, toml_sections
from codegen.compiler import compile_model
from codegen.fusion.costmodel import Work, kernel_estimate, macs_per_insn
from codegen.fusion.target_cost import CostParams, cost_params
from codegen.fusion.work import node_work
from codegen.ops.registry import OpKind
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.profile import build_plugin, profile_build

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT.parent / "shared" / "models" / "mlperf_tiny"
INT8_MODELS = [("KWS", "kws_ref_model.tflite"), ("VWW", "vww_96_int8.tflite"),
               ("IC", "pretrainedResnet_quant.tflite"), ("AD", "ad01_int8.tflite"),
               ("streaming wake word", "str_ww_ref_model.tflite")]
TARGETS = ["cortex-m4", "cortex-m55"]
FAST = ("cortex_m_dsp", "mve")


@dataclass(frozen=True)
class Layer:
    model: str
    target: str
    call: str
    variant: str  # the kernel family that ran it
    work: Work
    measured: int


def measure(model: str, path: Path, target: str, plugin: Path) -> tuple[list[Layer], int]:
    """The model's layers (one per kernel call of one node) with their measured instructions,
    and the measured total (call to return of the model)."""
    t = load_target(target)
    build = compile_model(path, CompileOptions(t))
    prof = profile_build(build, t, plugin=plugin)
    writer = {o: n for n in build.graph.nodes for o in n.outputs}
    by_cname = {c.cname: c for c in build.lowered.calls}
    layers = []
    for c in prof.calls:
        call = by_cname.get(c.call)
        if call is None or not call.writes or call.writes[0] not in writer:
            continue
        layers.append(Layer(model, target, c.call, c.variant, node_work(writer[call.writes[0]], build.graph),
                            min(c.instructions)))
    return layers, min(prof.totals)


def priced(params: CostParams, variant: str) -> CostParams:
    """The target's parameters with the family that ran the layer (reference where the fast
    variant had no kernel for it)."""
    return CostParams(**{**params.__dict__, "family": variant})


def features(layer: Layer, params: CostParams) -> tuple[float, ...]:
    w = layer.work
    return (1.0, w.macs / macs_per_insn(params, w.dtype, layer.variant), float(w.out_elements),
            float(w.accesses), float(w.taps), float(w.out_elements * len(w.steps)))


def fit(layers: list[Layer]) -> dict[tuple[str, str, str], dict[str, float]]:
    """Constants per (fast family, kind, dtype) over the layers those families ran."""
    groups: dict[tuple[str, str, str], list[Layer]] = defaultdict(list)
    for layer in layers:
        if layer.variant in FAST:
            groups[(layer.variant, layer.work.kind.value, layer.work.dtype)].append(layer)
    out = {}
    for key, rows in sorted(groups.items()):
        params = [cost_params(load_target(r.target)) for r in rows]
        known: dict[int, float] = {}
        if OpKind(key[1]) == OpKind.OUT_ELEMWISE_FUSABLE:
            cols = [0, 1, 2, 3, 4]
        else:  # an elementwise kernel is its one step: the call and the step's whole cost per element
            known = {2: 0.0, 3: 0.0}
            cols = [0, 5]
        weight = np.array([[1.0 / np.sqrt(r.measured)] for r in rows])
        feats = [features(r, priced(p, r.variant)) for r, p in zip(rows, params)]
        a = np.array([[f[c] for c in cols] for f in feats]) * weight
        b = np.array([r.measured - p.call_overhead_insns - sum(v * f[k] for k, v in known.items())
                      for r, p, f in zip(rows, params, feats)], dtype=np.float64) * weight[:, 0]
        x = nnls(a, b)
        consts = {FEATURES[k]: round(float(v), 3) for k, v in known.items()}
        consts.update({FEATURES[c]: round(float(v), 3) for c, v in zip(cols, x)})
        out[key] = {**{f: 0.0 for f in FEATURES if f not in consts}, **consts}
    return out


def estimate_of(layer: Layer) -> int:
    return kernel_estimate(layer.work, priced(cost_params(load_target(layer.target)), layer.variant)).instructions


def report(layers: list[Layer], totals: dict[tuple[str, str], int]) -> str:
    lines = ["# Cost model against measurement on the fast Cortex-M kernels", "",
             "Command: `python -m bench.cortex_m_costs` (from the repository root). Exact instructions of one "
             "inference in QEMU (`kiln profile`'s plugin) against the fusion cost model's estimate "
             "(codegen/fusion/costmodel.py with codegen/fusion/kernel_costs.toml, the sum over the model's "
             "kernel calls, as `kiln analyze` prints it); the `cortex_m_dsp` and `mve` constants fitted on "
             "these layers (`--fit`).", "",
             "| model | target | measured (kernels) | estimated | estimate / measured | worst layer (est. / meas.) |",
             "|---|---|---:|---:|---:|---|"]
    for model, _ in INT8_MODELS:
        for target in TARGETS:
            mine = [l for l in layers if l.model == model and l.target == target]
            meas, est = sum(l.measured for l in mine), sum(estimate_of(l) for l in mine)
            worst = max(mine, key=lambda l: abs(np.log(max(estimate_of(l), 1) / max(l.measured, 1))))
            lines.append(f"| {model} | {target} | {meas:,} | {est:,} | {est / meas:.2f} | {worst.call} "
                         f"({estimate_of(worst):,} / {worst.measured:,}) |")
    lines += ["", "The measured column sums the kernel calls (the model's total, call to return, adds the "
              "`run` function's own few hundred instructions): " +
              ", ".join(f"{m} {t} {n:,}" for (m, t), n in totals.items()) + ".", ""]
    return "\n".join(lines)


def measure_all() -> tuple[list[Layer], dict[tuple[str, str], int]]:
    layers: list[Layer] = []
    totals: dict[tuple[str, str], int] = {}
    with tempfile.TemporaryDirectory(prefix="kiln-cost-fit-") as tmp:
        plugin = build_plugin(Path(tmp))
        for model, fname in INT8_MODELS:
            for target in TARGETS:
                got, totals[(model, target)] = measure(model, MODELS / fname, target, plugin)
                layers += got
                print(f"{model:20s} {target:11s} {totals[(model, target)]:>12,}", flush=True)
    return layers, totals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="fit the fast families' constants and print them")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "COST_FIT_CORTEX_M.md")
    ap.add_argument("--measured", type=Path, help="a file of measured layers: read if it exists, else written")
    args = ap.parse_args(argv)
    if args.measured is not None and args.measured.is_file():
        layers, totals = pickle.loads(args.measured.read_bytes())
    else:
        layers, totals = measure_all()
        if args.measured is not None:
            args.measured.write_bytes(pickle.dumps((layers, totals)))
    if args.fit:
        print(toml_sections(fit(layers)))
        return 0
    args.out.write_text(report(layers, totals))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
