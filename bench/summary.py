"""The headline bullets of RESULTS.md and the plots, computed from the run's figures."""

from __future__ import annotations

from pathlib import Path

from bench import published
from bench.report import emx_total_ram, kiln_total_ram, tflm_arena
from bench.suite import ModelResult
from bench.svgplot import Series, grouped_bars

COLORS = {"kiln": "#d9480f", "emx": "#1971c2", "tflm": "#2f9e44", "ort": "#7048e8", "pub": "#555555"}


def _span(ratios: list[float], unit: str = "×") -> str:
    if not ratios:
        return "n/a"
    lo, hi = (f"{v:.3g}" for v in (min(ratios), max(ratios)))
    return f"{lo}{unit}" if lo == hi else f"{lo}{unit} to {hi}{unit}"


def headline(results: list[ModelResult]) -> list[str]:
    out = []
    int8 = [r for r in results if r.kind == "int8"]
    flt = [r for r in results if r.kind == "float"]
    hybrid = [r for r in results if r.kind == "hybrid"]
    def measured(rs: list[ModelResult]) -> list[ModelResult]:
        return [r for r in rs if r.records["kiln"].get("accuracy")]

    def unmeasured(rs: list[ModelResult]) -> str:
        k = len(rs) - len(measured(rs))
        return f" ({k} more not measured: see below)" if k else ""

    exact = [r for r in measured(int8) if r.records["kiln"].get("accuracy")["mismatches"] == 0]
    ok = [r for r in measured(flt) if r.records["kiln"].get("accuracy")["ok"]]
    text = f"- **Correctness**: Kiln's int8 outputs are bit-exact with the TFLite Micro interpreter on " \
           f"{len(exact)} of {len(measured(int8))} int8 models{unmeasured(int8)}"
    if flt:
        text += (f"; its float outputs are within 1e-5 relative of LiteRT on {len(ok)} of {len(measured(flt))} "
                 f"float models{unmeasured(flt)}")
    for r in hybrid:
        acc = r.records["kiln"].get("accuracy")
        if acc:
            text += (f"; on {r.model.label} (int8 weights, float activations) its largest error relative to "
                     f"LiteRT's hybrid kernels "
                     f"is {acc['max_rel']:.2g}" + ("" if acc["ok"] else " (outside 1e-5)"))
    peers = [r.records[t].get("accuracy") for r in int8 for t in ("ort", "emx")]
    worst = max((a["max_abs"] for a in peers if a and not a.get("is_reference")), default=None)
    if worst is not None:
        text += (f". onnxruntime and emx-onnx-cgen, on tf2onnx's QDQ conversion, differ from it by up to "
                 f"{worst:g} LSB")
    out.append(text + ".")

    at_bound = [r for r in results if r.records["kiln"].get("arena") is not None
                and r.records["kiln"].get("arena") == r.records["kiln"].get("arena_lower_bound")]
    with_arena = [r for r in results if r.records["kiln"].get("arena") is not None]
    vs_tflm = [tflm_arena(r.records["tflm"]) / kiln_total_ram(r.records["kiln"]) for r in results
               if kiln_total_ram(r.records["kiln"]) and tflm_arena(r.records["tflm"])]
    vs_emx = [emx_total_ram(r.records["emx"]) / kiln_total_ram(r.records["kiln"]) for r in results
              if kiln_total_ram(r.records["kiln"]) and emx_total_ram(r.records["emx"])]
    figs = published.tflm_cortex_m4()
    vs_pub = [figs[r.model.stem]["arena_used"] / kiln_total_ram(r.records["kiln"]) for r in results
              if r.model.stem in figs and kiln_total_ram(r.records["kiln"])]
    out.append(f"- **RAM**: Kiln's arena equals its lower bound on {len(at_bound)} of {len(with_arena)} "
               f"models. The TFLite Micro interpreter's smallest working arena (x86-64 build) is {_span(vs_tflm)} "
               f"Kiln's total RAM (arena + stack + model I/O), and its published Cortex-M4F `arena_used_bytes` "
               f"{_span(vs_pub)}; emx-onnx-cgen's heap + stack + I/O is {_span(vs_emx)} it.")

    def m4_ratio(kinds: tuple[str, ...]) -> list[float]:
        return [r.records["emx"].get("m4_instr") / r.records["kiln"].get("m4_instr") for r in results
                if r.kind in kinds and r.records["kiln"].get("m4_instr") and r.records["emx"].get("m4_instr")]
    ref = [r.records["kiln"].get("m4_instr") / figs[r.model.stem]["ref_instr"] for r in results
           if r.model.stem in figs and r.records["kiln"].get("m4_instr")]
    cmsis = [r.records["kiln"].get("m4_instr") / figs[r.model.stem]["cmsis_instr"] for r in results
             if r.model.stem in figs and r.records["kiln"].get("m4_instr")]
    text = (f"- **Cortex-M4F instructions** (exact, QEMU): emx-onnx-cgen executes {_span(m4_ratio(('int8',)))} "
            f"Kiln's instructions per inference on the int8 models, {_span(m4_ratio(('float', 'hybrid')))} on "
            f"the float and hybrid ones.")
    if ref:
        variants = sorted({v for r in results for v in (r.records["kiln"].get("m4_variants") or [])})
        text += (f" Against the *published* TFLite Micro counts (not measured here), Kiln executes {_span(ref)} "
                 f"the reference kernels' instructions and {_span(cmsis)} CMSIS-NN's (Kiln's kernel variants: "
                 f"{', '.join(variants)}).")
    out.append(text)

    lat = [r.records["kiln"].get("latency") / r.records["ort"].get("latency") for r in results
           if r.records["kiln"].get("latency") and r.records["ort"].get("latency")]
    lat_t = [r.records["kiln"].get("latency") / r.records["tflm"].get("latency") for r in results
             if r.records["kiln"].get("latency") and r.records["tflm"].get("latency")]
    out.append(f"- **Host latency** (same run, ratios only): Kiln takes {_span(lat)} onnxruntime's time per "
               f"inference (single thread; SIMD kernels against Kiln's scalar host kernels) and {_span(lat_t)} "
               f"the TFLite Micro interpreter's.")

    fl = [r.records["emx"].get("m4_image").flash / r.records["kiln"].get("m4_image").flash for r in results
          if r.records["kiln"].get("m4_image") and r.records["emx"].get("m4_image")]
    out.append(f"- **Flash** (Cortex-M4F firmware, arm-none-eabi-size): emx-onnx-cgen's image is {_span(fl)} "
               f"Kiln's.")
    return out


def plots(results: list[ModelResult], out_dir: Path) -> list[Path]:
    labels = [r.model.label for r in results]

    def values(fn) -> tuple[float | None, ...]:
        return tuple(fn(r) for r in results)

    rec = lambda r, t: r.records[t]  # noqa: E731
    figs = published.tflm_cortex_m4()
    ram = grouped_bars(
        "RAM per model (bytes, log scale)",
        "Kiln: arena + stack + I/O; TFLM: smallest arena that runs; emx: heap + stack + I/O (Cortex-M4F)",
        labels,
        [Series("Kiln", COLORS["kiln"], values(lambda r: kiln_total_ram(rec(r, "kiln")))),
         Series("TFLite Micro interpreter", COLORS["tflm"], values(lambda r: tflm_arena(rec(r, "tflm")))),
         Series("emx-onnx-cgen", COLORS["emx"], values(lambda r: emx_total_ram(rec(r, "emx")))),
         Series("TFLM arena_used_bytes, Cortex-M4F (published)", COLORS["tflm"],
                values(lambda r: figs.get(r.model.stem, {}).get("arena_used")), hatched=True)], "B")
    m4 = grouped_bars(
        "Cortex-M4F instructions per inference (log scale)",
        "measured in QEMU mps2-an386; hatched: TFLite Micro, published (not measured in this run)",
        labels,
        [Series("Kiln", COLORS["kiln"], values(lambda r: rec(r, "kiln").get("m4_instr"))),
         Series("emx-onnx-cgen", COLORS["emx"], values(lambda r: rec(r, "emx").get("m4_instr"))),
         Series("TFLM reference kernels (published)", COLORS["tflm"],
                values(lambda r: figs.get(r.model.stem, {}).get("ref_instr")), hatched=True),
         Series("TFLM CMSIS-NN (published)", COLORS["pub"],
                values(lambda r: figs.get(r.model.stem, {}).get("cmsis_instr")), hatched=True)], "")
    host = grouped_bars(
        "Host x86-64 instructions per inference (callgrind, log scale)",
        "one inference after a warm-up; the interpreters' figures include their Python call",
        labels,
        [Series("Kiln", COLORS["kiln"], values(lambda r: rec(r, "kiln").get("host_instr"))),
         Series("emx-onnx-cgen", COLORS["emx"], values(lambda r: rec(r, "emx").get("host_instr"))),
         Series("TFLite Micro interpreter", COLORS["tflm"], values(lambda r: rec(r, "tflm").get("host_instr"))),
         Series("onnxruntime (1 thread)", COLORS["ort"], values(lambda r: rec(r, "ort").get("host_instr")))], "")
    paths = []
    for name, svg in (("ram.svg", ram), ("instructions_m4.svg", m4), ("instructions_host.svg", host)):
        path = out_dir / name
        path.write_text(svg)
        paths.append(path)
    return paths
