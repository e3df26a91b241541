"""Classic ML on Cortex-M4: exact instructions per inference, flash and RAM of scikit-learn-shaped
models (tree ensembles, logistic regression, an RBF SVM) compiled by Kiln, next to emlearn,
m2cgen and micromlgen, the code generators firmware engineers use for them.

Run from the repository root:  python -m bench.classic_ml  [--out bench/CLASSIC_ML.md]

Kiln's models are built with onnx.helper from fixed seeds (bench/classic_ml_models.py; no
scikit-learn needed), compiled for cortex-m4 and run on the emulated board with `kiln profile`'s
machinery (codegen/verify/profile.py: the QEMU plugin counts every instruction from the call
into the model to its return), and checked against onnxruntime with `kiln verify`'s. The peers
are not built here (their code stays outside the repository): their figures, measured with the
same board, toolchain, flags and plugin on the same model shapes trained with scikit-learn, are
read from bench/peers/classic_ml.json, whose README section says how they were made.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import onnx

from bench.classic_ml_models import MODELS
from bench.cortex_m import _commit, _fmt, _toolchain
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.profile import build_plugin, profile_model
from codegen.verify.run import verify_model

ROOT = Path(__file__).resolve().parent.parent
PEERS_FILE = ROOT / "bench" / "peers" / "classic_ml.json"
TARGET = "cortex-m4"
PROFILE_SAMPLES = 8
VERIFY_SAMPLES = 50
# the tools of the peers file, in the table's order: (key, name)
PEER_TOOLS = [("kiln", "Kiln (skl2onnx's ONNX)"), ("emlearn", "emlearn"), ("emlearn_proba", "emlearn, leaf_bits=8"),
              ("m2cgen", "m2cgen"), ("m2cgen_float", "m2cgen, float by hand"), ("micromlgen", "micromlgen")]


@dataclass(frozen=True)
class KilnFigures:
    instructions: tuple[int, ...]  # per input
    flash: int  # the model's objects: text + rodata
    ram: int  # data + bss (the arena and a few bytes)
    arena: int
    stack: int | None  # the firmware's measured high-water mark (harness included)
    exact: bool  # every output within DESIGN.md's tolerance of onnxruntime (labels exactly)
    max_rel_error: float


def measure(model: Path, plugin: Path) -> KilnFigures:
    options = CompileOptions(load_target(TARGET))
    p = profile_model(model, options, samples=PROFILE_SAMPLES, seed=0, plugin=plugin)
    v = verify_model(model, options, samples=VERIFY_SAMPLES, seed=1)
    m = p.model_sizes
    return KilnFigures(p.totals, m.text + m.rodata, m.data + m.bss, p.arena_bytes, p.stack_bytes, v.ok,
                       max(o.max_rel_error for o in v.outputs))


def _mean(values) -> int:
    return round(sum(values) / len(values))


def _span(values) -> str:
    return f"{_fmt(min(values))}..{_fmt(max(values))}"


def _peer_row(title: str, tool: str, fig: dict) -> str:
    """One tool on one trained model: instructions (mean, range), flash (model, firmware), RAM +
    stack, labels."""
    if "unsupported" in fig:
        return f"| {title} | {tool} | n/a: {fig['unsupported']} | | | | | |"
    m, f, ins = fig["model_sizes"], fig["firmware_sizes"], fig["instructions"]
    agree = fig.get("labels_agree_with_sklearn") or ("= onnxruntime" if fig.get("exact_vs_onnxruntime") else "NO")
    return (f"| {title} | {tool} | {_fmt(_mean(ins))} | {_span(ins)} | {_fmt(m['text'] + m['rodata'])} | "
            f"{_fmt(f['text'] + f['rodata'])} | {_fmt(m['data'] + m['bss'])} + {_fmt(fig['stack'])} | {agree} |")


def render(results: dict[str, KilnFigures], toolchain: str, peers: dict) -> str:
    lines = ["# Classic ML on Cortex-M4: instructions per inference, flash and RAM", "",
             f"Command: `python -m bench.classic_ml` (from the repository root; commit {_commit()}).  ",
             f"Toolchain and emulator: {toolchain}; board mps2-an386 (Cortex-M4F), "
             "`-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -O2`.", "",
             "Exact executed instructions of one inference (the call into the model to its return), counted "
             "in QEMU by the project's TCG plugin, one row of 16 float32 features in, the label and the class "
             "scores out. A tree walk's length depends on the input, so the counts are the mean (and range) "
             f"over {PROFILE_SAMPLES} inputs.", "",
             "## Kiln on the bench's models", "",
             "The models of `bench/classic_ml_models.py`, built with onnx.helper from fixed seeds in the form "
             "scikit-learn + skl2onnx (`zipmap=False`) write them, with full trees (thresholds drawn like the "
             "standard-normal inputs). *Flash*: the model's objects (`N.c`, `N_weights.c`), text + rodata. "
             "*RAM*: their data + bss (the arena and a few bytes); *stack*: the firmware's measured high-water "
             f"mark, harness included. *Exact*: `kiln verify` against onnxruntime on {VERIFY_SAMPLES} random "
             "inputs, labels equal and scores within 1e-5 of the largest (worst relative error shown).", "",
             "| model | instructions (mean) | range | flash | RAM (arena) | stack | exact vs onnxruntime |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for key, title, _ in MODELS:
        r = results[key]
        lines.append(f"| {title} | {_fmt(_mean(r.instructions))} | {_span(r.instructions)} | {_fmt(r.flash)} | "
                     f"{_fmt(r.ram)} ({_fmt(r.arena)}) | {_fmt(r.stack) if r.stack is not None else '?'} | "
                     f"{'yes' if r.exact else 'NO'} ({r.max_rel_error:.1e}) |")
    models = peers.get("models", {})
    if models:
        lines += ["", "## Next to emlearn, m2cgen and micromlgen, on the same trained models", "",
                  "The same shapes trained with scikit-learn on a synthetic data set (`make_classification`, "
                  "fixed seeds), given to each tool: to Kiln as skl2onnx's ONNX, to the others as the fitted "
                  "estimator. Each tool's C was built with the flags above into the bench's peer "
                  "firmware (`bench/harness/m4_main.c.j2`) and run on the same board under the same plugin, "
                  "on 8 rows of the data set (bench/peers/README.md says how; the figures are in "
                  "bench/peers/classic_ml.json). *Model flash*: the objects of the tool's generated code and "
                  "its call adapter (Kiln: the model's objects), text + rodata, unused functions included; "
                  "*firmware flash*: the linked image (harness, startup and the C library's pieces it calls, "
                  "such as expf or m2cgen's software double arithmetic; unused functions dropped), text + "
                  "rodata; *RAM*: the model objects' data + bss, + the firmware's measured stack. "
                  "*Labels*: the class each tool's output gives, against scikit-learn's "
                  "`predict` on those rows (Kiln: `kiln verify` against onnxruntime). The tools do not all "
                  "compute the same thing; the notes under the table say what each does.", "",
                  "| trained model | tool | instructions (mean) | range | model flash | firmware flash | RAM + stack | "
                  "labels |",
                  "|---|---|---:|---:|---:|---:|---:|---|"]
        for key, _, _ in MODELS:
            entry = models.get(key)
            if entry is None:
                continue
            tools = [(name, entry[tool]) for tool, name in PEER_TOOLS if tool in entry]
            lines += [_peer_row(entry["title"] if k == 0 else "", name, fig) for k, (name, fig) in enumerate(tools)]
        lines += [""] + [f"- {note}" for note in peers.get("notes", [])]
        lines += ["", "Peer set-up: " + "; ".join(f"{k} {v}" for k, v in peers.get("versions", {}).items()) + "."]
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "CLASSIC_ML.md")
    args = ap.parse_args(argv)
    results: dict[str, KilnFigures] = {}
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as tmp:
        plugin = build_plugin(Path(tmp))
        for key, title, build in MODELS:
            path = Path(tmp) / f"{key}.onnx"
            onnx.save(build(), path)
            results[key] = r = measure(path, plugin)
            print(f"{title:58s} {_mean(r.instructions):>8,} instructions  flash {r.flash:>8,} B  "
                  f"exact {r.exact}", flush=True)
    peers = json.loads(PEERS_FILE.read_text()) if PEERS_FILE.is_file() else {}
    args.out.write_text(render(results, _toolchain(), peers))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
