"""`python -m bench.host_latency`: host latency of the float32 MLPerf Tiny models, Kiln's
host build next to onnxruntime with one thread, in one run; writes bench/HOST_LATENCY.md.

Kiln: the generated C of target `host-native` (the portable reference kernels, `gcc -O3
-march=native`) and, for scale, of target `host` (`-O2`), each as a shared library called
through ctypes. onnxruntime: the tf2onnx conversion of the same .tflite file (bench/peers/
convert.py, cached in bench/.work/onnx), one intra-op and one inter-op thread. All three are
timed by bench/latency.py in the same process: interleaved rounds, the calling thread's CPU
time, the median per inference. Run from the repository root with Kiln's environment.
"""

from __future__ import annotations

import argparse
import ctypes
import time
from pathlib import Path

import numpy as np

from bench import env as benv
from bench import cbuild, latency
from bench.config import BENCH, SEED, WORK, load_models
from bench.peers import convert, kiln, ort
from bench.report import table
from bench.suite import model_io, model_kind
from codegen.ir.types import np_dtype
from codegen.targets import load_target
from codegen.verify.compare import compare_output
from codegen.verify.samples import random_samples

OUT = BENCH / "HOST_LATENCY.md"
KILN_TARGETS = {"Kiln host-native": "host-native", "Kiln host": "host"}  # column -> target
ORT = "onnxruntime (1 thread)"


def _kiln_library(model: Path, target: str, work: Path) -> tuple[cbuild.CModel, Path]:
    """The generated C of `model` for `target`, built as a shared library with the target's
    flags (and the benchmark's -std=c99): (CModel, library path)."""
    cm = kiln.host_model(kiln.compile_for(model, target), work)
    return cm, cbuild.build_shared(cm, ("-std=c99", *load_target(target).cflags))


def _library_output(so: Path, sample: bytes, cm: cbuild.CModel, dtype: str) -> np.ndarray:
    """One inference through the library's bench_run(), for the agreement check."""
    fn = ctypes.CDLL(str(so)).bench_run
    fn.argtypes, fn.restype = (ctypes.c_void_p, ctypes.c_void_p), ctypes.c_int
    out = np.zeros(cm.output_bytes, np.uint8)
    if fn(ctypes.c_char_p(sample), out.ctypes.data) != 0:
        raise RuntimeError("the generated model returned an error")
    return out.view(np_dtype(dtype))


def measure(model, budget_s: float, rounds: int, tf2onnx_version: str, log=print) -> dict:
    """Median seconds per inference of each tool on one model, and Kiln's agreement with
    onnxruntime on the timed input."""
    inp, out = model_io(model.path)
    arr = random_samples([inp], 1, SEED)[0][inp["name"]]
    sample = cbuild.as_bytes(arr, np_dtype(inp["dtype"]))
    calls, outputs = {}, {}
    for label, target in KILN_TARGETS.items():
        log(f"  {label}: build")
        cm, so = _kiln_library(model.path, target, WORK / "host_latency" / model.stem / target)
        calls[label] = latency.ctypes_call(so, sample, cm.output_bytes)
        outputs[label] = _library_output(so, sample, cm, out["dtype"])
    log(f"  {ORT}: convert")
    onnx_path = convert.convert(model.path, WORK / "onnx" / f"{model.stem}.onnx", tf2onnx_version)
    calls[ORT] = ort.prepared_run(onnx_path, arr)
    want = ort.outputs(onnx_path, [arr])[0]
    log(f"  timing ({rounds} rounds of about {budget_s:g} s per tool)")
    times = latency.median_times(calls, budget_s, rounds)
    agree = {label: compare_output("out", outputs[label], want).max_rel_error for label in KILN_TARGETS}
    return {"label": model.label, "kind": model_kind(model.path, inp["dtype"]), "times": times,
            "agree": agree}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def render(rows: list[dict], budget_s: float, rounds: int, minutes: float) -> str:
    env = benv.environment()
    labels = [*KILN_TARGETS, ORT]
    body = [[r["label"], *[_ms(r["times"][t]) for t in labels],
             f"{r['times']['Kiln host-native'] / r['times'][ORT]:.2f}",
             f"{r['agree']['Kiln host-native']:.1e}"] for r in rows]
    head = ["model", *[f"{t}, ms" for t in labels], "host-native / onnxruntime", "max rel. diff vs onnxruntime"]
    native, portable = (" ".join(load_target(t).cflags) for t in KILN_TARGETS.values())
    lines = [
        "# Host latency: Kiln's host build against onnxruntime (float32 models)", "",
        "Written by `python -m bench.host_latency` (bench/host_latency.py); do not edit by hand.", "",
        "Median CPU time per inference, all tools in one process and one run. Kiln: the generated C "
        f"(portable reference kernels) of target `host-native` (`gcc -std=c99 {native}`) and of target "
        f"`host` (`gcc -std=c99 {portable}`), each a shared library called through ctypes. onnxruntime: "
        "the tf2onnx conversion of the same .tflite model, one intra-op and one inter-op thread, "
        "`CPUExecutionProvider`. The same random input for every tool. bench/latency.py times each call "
        "with the calling thread's CPU clock (`time.thread_time_ns`; every tool computes on that thread, "
        f"time preempted by other processes does not count) in {rounds} interleaved rounds of about "
        f"{budget_s:g} s per tool, and keeps the median. The last column is Kiln `host-native`'s largest "
        "difference from onnxruntime's output, relative to the output's largest magnitude "
        "(codegen/verify/compare.py; the float tolerance is 1e-5).", "",
        *table(head, body), "",
        "KWS hybrid (`kws_ref_model_float32.tflite`) has int8 weights and float activations: Kiln runs "
        "TFLite's dynamic-range arithmetic (each layer's input quantized to int8 at run time, as LiteRT, "
        "against which `kiln verify` checks it), onnxruntime tf2onnx's graph of the same model, which "
        "computes otherwise; hence their larger difference.", "",
        "## Environment", "",
        *table(["", ""], [[k, v] for k, v in env.items() if "arm" not in k and "valgrind" not in k], "ll"),
        "", f"Run time {minutes:.1f} min.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.host_latency", description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="", help="comma-separated labels or file stems (default: every "
                    "float32-input model of bench/models.toml)")
    ap.add_argument("--budget", type=float, default=3.0, help="seconds of timed calls per tool and model")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    ap.add_argument("--out", type=Path, default=OUT, help="Markdown file to write (default bench/HOST_LATENCY.md)")
    args = ap.parse_args(argv)
    wanted = {w.strip().lower() for w in args.models.split(",") if w.strip()}
    models = [m for m in load_models() if model_io(m.path)[0]["dtype"] == "float32"
              and (not wanted or m.label.lower() in wanted or m.stem.lower() in wanted)]
    start = time.monotonic()
    benv.ensure_peer_env()
    version = benv.peer_versions().get("tf2onnx", "unknown")
    rows = []
    for model in models:
        print(f"{model.label} ({model.path.name})")
        rows.append(measure(model, args.budget, args.rounds, version))
    args.out.write_text(render(rows, args.budget, args.rounds, (time.monotonic() - start) / 60))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
