"""The model's whole RAM on a Cortex-M4: I/O inside the arena (VWW) and `--ram-limit`'s choices (KWS).

Run from the repository root:  python -m bench.ram_fit  [--out bench/RAM_FIT.md] [--samples 10]

Every build is checked against TFLite Micro on random inputs (bit-exact or not) and run in
QEMU (mps2-an386) under the instruction-counting plugin (`kiln profile`'s machinery): the
instructions from the call into the model to its return, and the stack high-water mark of the
firmware (painted stack, test driver's frame included). RAM = arena (manifest) + the inputs and
outputs when they are the caller's buffers + stack. `--ram-limit` rows give what the search
took (codegen/memory/fit.py), the cost model's estimate of its price and the measured one.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bench.patch_vww import _commit, _n, _pct
from codegen.compiler import compile_model
from codegen.errors import KilnError
from codegen.memory.fit import format_fit
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.profile import build_plugin, profile_generated
from codegen.verify.reference import run_tflite_micro
from codegen.verify.run import run_on_target
from codegen.verify.samples import random_samples

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT.parent / "shared" / "models" / "mlperf_tiny"
TARGET = "cortex-m4"
# bench/RESULTS.md before I/O could go into the arena, and TFLite Micro's smallest arena that runs
VWW_BEFORE, VWW_TFLM = 83_454, 103_672


@dataclass(frozen=True)
class Row:
    label: str
    arena: int
    io_outside: int
    stack: int
    instructions: int
    exact: bool
    took: str = ""

    @property
    def total(self) -> int:
        return self.arena + self.io_outside + self.stack


def measure(model: Path, options: CompileOptions, label: str, samples: int, plugin: Path) -> Row:
    build = compile_model(model, options)
    inputs = random_samples(build.manifest["inputs"], samples, 0)
    got = run_on_target(build, options, inputs)
    ref = run_tflite_micro(model, inputs)
    exact = all(np.array_equal(g[io["name"]], list(r.values())[k])
                for g, r in zip(got, ref) for k, io in enumerate(build.manifest["outputs"]))
    prof = profile_generated(build.files, build.name, build.manifest, options.target, inputs[:1], plugin=plugin)
    ram = build.manifest["ram"]
    took = format_fit(build.fit, build.fit_baseline) if build.fit is not None else ""
    return Row(label, ram["arena_bytes"], ram["total_bytes"] - ram["arena_bytes"], prof.stack_bytes or 0,
               prof.totals[0], exact, took)


def _table(rows: list[Row], base: Row) -> list[str]:
    lines = ["| build | arena | I/O outside the arena | stack | **total RAM** | instructions | vs default | "
             "bit-exact |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: |"]
    for r in rows:
        lines.append(f"| {r.label} | {_n(r.arena)} | {_n(r.io_outside)} | {_n(r.stack)} | **{_n(r.total)}** | "
                     f"{_n(r.instructions)} | {_pct(r.instructions, base.instructions)} | "
                     f"{'yes' if r.exact else 'NO'} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "RAM_FIT.md")
    ap.add_argument("--samples", type=int, default=10)
    args = ap.parse_args()
    base = CompileOptions(load_target(TARGET))
    with tempfile.TemporaryDirectory() as tmp:
        plugin = build_plugin(Path(tmp))
        vww = MODELS / "vww_96_int8.tflite"
        vww_rows = [measure(vww, base, "default (I/O the caller's)", args.samples, plugin),
                    measure(vww, replace(base, io_in_arena=True), "`--io-in-arena`", args.samples, plugin),
                    measure(vww, replace(base, io_in_arena=True, arena="caller"),
                            "`--io-in-arena --arena caller`", args.samples, plugin)]
        kws = MODELS / "kws_ref_model.tflite"
        kws_rows, refused = [measure(kws, base, "default", args.samples, plugin)], []
        for limit in (10 * 1024, 9 * 1024, 8 * 1024):
            try:
                kws_rows.append(measure(kws, replace(base, ram_limit=limit), f"`--ram-limit {limit // 1024}K`",
                                        args.samples, plugin))
            except KilnError as err:
                refused.append(f"- `--ram-limit {limit // 1024}K`: refused, {str(err).split(': ', 1)[1]}")
    lines = ["# The model's whole RAM on the Cortex-M4: I/O in the arena, `--ram-limit`", "",
             f"Command: `python -m bench.ram_fit` (from the repository root; commit {_commit()}; {args.samples} "
             "random samples per build against TFLite Micro). RAM = arena + the inputs and outputs when they are "
             "the caller's + the stack high-water mark in QEMU (mps2-an386); instructions: one inference, exact.",
             "", "## VWW int8 (MobileNetV1 0.25, 96x96): inputs and outputs inside the arena", ""]
    lines += _table(vww_rows, vww_rows[0])
    lines += ["", f"Before I/O could go into the arena, bench/RESULTS.md counted {_n(VWW_BEFORE)} B for Kiln; "
              f"TFLite Micro's smallest arena that runs the model is {_n(VWW_TFLM)} B (interpreter and stack "
              f"not included): {vww_rows[1].total / VWW_TFLM:.2f}x of it with `--io-in-arena`.", "",
              "## KWS int8 (DS-CNN): what `--ram-limit` takes", ""]
    lines += _table(kws_rows, kws_rows[0])
    lines += [""] + [f"- {r.label}: {r.took}" for r in kws_rows if r.took] + refused + [""]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
