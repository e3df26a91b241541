"""`python -m bench [--quick]`: Kiln next to its peers on the MLPerf Tiny models, in one run.

Measures RAM, flash, exact Cortex-M4F instructions (QEMU), host instructions (callgrind), host
latency ratios and agreement with the reference runtime for Kiln, the TFLite Micro interpreter,
onnxruntime and emx-onnx-cgen, and writes bench/RESULTS.md with SVG plots beside it. Run from
the repository root with Kiln's environment (`make setup`, then `.venv/bin/python -m bench`).
A failing peer or model never stops the run: its figures say why they are missing, and the
tracebacks go to bench/.work/bench.log. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from bench import env as benv
from bench import pyregion, report, summary
from bench.config import BENCH, FULL, QUICK, WORK, load_models
from bench.record import TOOLS
from bench.suite import Context, ModelResult, run_model

FIGURES = ("arena", "arena_lower_bound", "io_bytes", "accuracy", "host_stack", "host_heap", "host_instr",
           "latency", "m4_instr", "m4_model", "m4_image", "m4_stack", "m4_heap", "tflm_arena")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="only the models marked quick in bench/models.toml, fewer inputs, shorter timing")
    ap.add_argument("--models", default="",
                    help="comma-separated labels or file stems to run (default: all of bench/models.toml)")
    ap.add_argument("--out", type=Path, default=BENCH / "RESULTS.md",
                    help="Markdown file to write; the SVG plots go beside it (default bench/RESULTS.md)")
    return ap


def _setup(ctx: Context) -> list[str]:
    """Peer environment, valgrind and QEMU helpers; what is unusable becomes a reason, not an exit."""
    notes = []
    try:
        benv.ensure_peer_env()
        ctx.tf2onnx_version = benv.peer_versions().get("tf2onnx", "unknown")
    except Exception as err:  # no network, no wheel: onnxruntime and emx-onnx-cgen get the reason
        ctx.peer_env_error = f"bench/.venv-peers could not be set up: {err}"
        notes.append(f"- onnxruntime, emx-onnx-cgen: {ctx.peer_env_error}")
    if shutil.which("valgrind") is None:
        ctx.valgrind_error = "valgrind is not installed (apt-get install valgrind)"
    else:
        try:
            ctx.region_lib = pyregion.build_region_lib(WORK / "region")
            ctx.region_baseline = pyregion.count(ctx.region_lib, "none", None, None, WORK / "region")
        except Exception as err:
            ctx.valgrind_error = f"callgrind region unusable: {err}"
    if ctx.valgrind_error:
        notes.append(f"- all tools, host instructions: {ctx.valgrind_error}")
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        ctx.qemu_error = "qemu-system-arm or arm-none-eabi-gcc is not installed (make setup installs them)"
    else:
        try:
            from codegen.verify.profile import build_plugin

            ctx.plugin = build_plugin(WORK)
        except Exception as err:
            ctx.qemu_error = f"the instruction-counting plugin did not build: {err}"
    if ctx.qemu_error:
        notes.append(f"- Kiln, emx-onnx-cgen, Cortex-M4F figures: {ctx.qemu_error}")
    return notes


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    mode = QUICK if args.quick else FULL
    models = [m for m in load_models() if m.quick or not args.quick]
    if args.models:
        wanted = {w.strip().lower() for w in args.models.split(",") if w.strip()}
        models = [m for m in models if m.label.lower() in wanted or m.stem.lower() in wanted]
    missing = [m for m in models if not m.path.is_file()]
    for m in missing:
        print(f"bench: skipping {m.label}: {m.path} not found", file=sys.stderr)
    models = [m for m in models if m.path.is_file()]
    if not models:
        print("bench: no model to run (see bench/models.toml)", file=sys.stderr)
        return 2

    start = time.monotonic()
    load_start = os.getloadavg()[0]
    WORK.mkdir(parents=True, exist_ok=True)
    ctx = Context(mode)
    ctx_notes = _setup(ctx)
    ctx_notes += [f"- {m.label}: model file {m.path} not found" for m in missing]
    results: list[ModelResult] = []
    for k, model in enumerate(models, 1):
        t0 = time.monotonic()
        print(f"bench: [{k}/{len(models)}] {model.label} ({model.path.name}) ...", end="", flush=True)
        try:
            res = run_model(model, ctx)
        except Exception as err:  # the model itself could not be read or run by the reference
            res = ModelResult(model)
            for tool in TOOLS:
                for key in FIGURES:
                    res.records[tool].missing(key, f"the model could not be prepared: {err}")
            ctx.log.append(f"{model.label}: {err!r}")
        results.append(res)
        failed = sum(len(r.why) for r in res.records.values())
        print(f" {time.monotonic() - t0:.0f} s{f', {failed} figures missing' if failed else ''}", flush=True)

    minutes = (time.monotonic() - start) / 60
    load_end = os.getloadavg()[0]
    (WORK / "bench.log").write_text("\n\n".join(ctx.log) + "\n")
    headline = summary.headline(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    environment = benv.environment()
    environment["load average (1 min) at start / end"] = f"{load_start:.1f} / {load_end:.1f}"
    args.out.write_text(report.render(results, environment, mode, minutes, headline, ctx_notes))
    plots = summary.plots(results, args.out.parent)
    print("\n".join(headline))
    print(f"bench: wrote {args.out} and {', '.join(p.name for p in plots)} in {minutes:.1f} min"
          + (f"; failures logged in {WORK / 'bench.log'}" if ctx.log else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
