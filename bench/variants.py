"""Shape variants and several models in one library, against separate builds.

Run from the repository root:  python -m bench.variants  [--out bench/VARIANTS.md] [--samples 3]

The measurements, each verified before it is counted:
- a 1-D CNN over a sequence of any length (tests/variants/models.py: seq_classifier) built with
  three variants (T = 32, 64, 128) for the Cortex-M4 against three separate builds: flash and RAM
  of the generated objects (the target's compiler and flags, `arm-none-eabi-size`), arena and
  weights, each variant checked against onnxruntime on the host and in QEMU (mps2-an386) and
  its instructions counted there;
- a small CNN with batch 1 and batch 4 for the Cortex-A72 under qemu-aarch64: checked against
  onnxruntime, instructions per inference and per sample;
- MLPerf Tiny KWS (int8) with batch 1 and batch 2 on the Cortex-M4, each variant checked bit for
  bit against TFLite Micro, instructions with the kernels shared and with a copy per variant;
- MLPerf Tiny KWS and VWW (int8) in one Cortex-M4 firmware with one shared arena against two
  separate builds, both checked bit for bit against TFLite Micro in that one image;
- an ONNX LSTM compiled once with a bounded time axis (`--max-shape`), checked against
  onnxruntime at several lengths on the host and the Cortex-M4, its instructions counted at each;
- the same for TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM, float32 and int8 (TFLite Micro's integer
  LSTM), its time axis open in the model, checked at each length against TFLite Micro / LiteRT
  running the model written with that many steps (tests/tflite_recurrent_models.py: lstm_model).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import onnx

from codegen.compiler import compile_model
from codegen.emit.render import write_generated
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.variants.build import compile_variants
from codegen.variants.chain import verify_models
from codegen.variants.commands import profile_library, verify_library
from codegen.variants.kernels import kernel_code
from codegen.variants.spec import parse_variants
from codegen.verify.firmware import SECTION_FLAGS, Sizes, elf_sizes, tool
from codegen.variants.bounded import verify_bounded
from tests.variants.models import batch_cnn, lstm_tagger, seq_classifier

ROOT = Path(__file__).resolve().parent.parent
MLPERF = ROOT.parent / "shared" / "models" / "mlperf_tiny"
SEQ_VARIANTS = ["x=1,8,32", "x=1,8,64", "x=1,8,128"]
BATCH_VARIANTS = ["image=1,3,16,16", "image=4,3,16,16"]
KWS_VARIANTS = ["input_1=1,49,10,1", "input_1=2,49,10,1"]
LSTM_MAX = {"x": (64, 1, 8)}
LSTM_LENGTHS = (1, 8, 16, 32, 64)


def object_sizes(files: dict, target, work: Path) -> Sizes:
    """Flash and RAM of every generated .c file compiled as a user's build compiles it."""
    for name, content in files.items():
        write_generated(work / name, content)
    objs = []
    for src in sorted(f for f in files if f.endswith(".c")):
        obj = work / (src[:-2] + ".o")
        subprocess.run([target.cc, *target.cflags, *SECTION_FLAGS, "-I", str(work), "-c", src, "-o", str(obj)],
                       cwd=work, check=True)
        objs.append(obj)
    return elf_sizes(tool(target, "size"), objs, work)


def _sizes_of(files: dict, target) -> Sizes:
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as tmp:
        return object_sizes(files, target, Path(tmp))


def _sum(sizes: list[Sizes]) -> Sizes:
    return Sizes(*(sum(getattr(s, k) for s in sizes) for k in ("text", "rodata", "data", "bss")))


def _n(x: int) -> str:
    return f"{x:,}"


def library_vs_separate(model: Path, target: str, variants: list[str]) -> list[str]:
    options = CompileOptions(load_target(target))
    lib = compile_variants(model, options, parse_variants(variants, model))
    one = _sizes_of(lib.files, options.target)
    separate = []
    for spec in parse_variants(variants, model):
        build = compile_model(model, replace(options, name=f"sep_{spec.label}", input_shapes=dict(spec.input_shapes),
                                             specialized=dict(spec.specialized)))
        separate.append((build, _sizes_of(build.files, options.target)))
    rows = ["| build | arena B | weights B | flash B (text + rodata + data) | RAM B (data + bss) |",
            "|---|---:|---:|---:|---:|"]
    for (build, s), spec in zip(separate, parse_variants(variants, model)):
        rows.append(f"| separate: {spec.describe()} | {_n(build.manifest['arena_bytes'])} | "
                    f"{_n(build.manifest['weights_bytes'])} | {_n(s.flash)} | {_n(s.ram)} |")
    total = _sum([s for _, s in separate])
    rows.append(f"| three separate builds | {_n(sum(b.manifest['arena_bytes'] for b, _ in separate))} | "
                f"{_n(sum(b.manifest['weights_bytes'] for b, _ in separate))} | {_n(total.flash)} | {_n(total.ram)} |")
    rows.append(f"| **one library, three variants** | **{_n(lib.arena_bytes)}** | "
                f"**{_n(sum(lib.shared.nbytes.values()))}** | **{_n(one.flash)}** | **{_n(one.ram)}** |")
    own = compile_variants(model, replace(options, variant_kernels="own"), parse_variants(variants, model))
    s = _sizes_of(own.files, options.target)
    rows.append(f"| one library, `--variant-kernels own` | {_n(own.arena_bytes)} | "
                f"{_n(sum(own.shared.nbytes.values()))} | {_n(s.flash)} | {_n(s.ram)} |")
    return rows


def verify_rows(model: Path, targets: list[str], variants: list[str], samples: int) -> list[str]:
    rows = ["| target | variant | shapes | max abs error | max relative error | verdict |", "|---|---|---|---:|---:|---|"]
    for target in targets:
        for c in verify_library(model, CompileOptions(load_target(target)), variants, samples=samples, seed=0):
            for o in c.result.outputs:
                rows.append(f"| {target} | {c.name} | {c.description} | {o.max_abs_error:.3g} | {o.max_rel_error:.3g} | "
                            f"{'ok' if o.ok else 'MISMATCH'} |")
    return rows


def instruction_rows(model: Path, target: str, variants: list[str]) -> list[str]:
    """Each variant's instructions with the target's default kernel code and with the other one."""
    rows = ["| kernel code | variant | shapes | instructions per inference | samples (axis 0) | "
            "instructions per sample |", "|---|---|---|---:|---:|---:|"]
    default = CompileOptions(load_target(target))
    shared, _ = kernel_code(default)
    for mode in ("shared", "own") if shared else ("own", "shared"):
        label = f"{mode}{' (auto)' if (mode == 'shared') == shared else ''}"
        for name, description, prof in profile_library(model, replace(default, variant_kernels=mode), variants):
            batch = int(description.split("=")[1].split(",")[0])
            rows.append(f"| {label} | {name} | {description} | {_n(min(prof.totals))} | {batch} | "
                        f"{_n(min(prof.totals) // batch)} |")
    return rows


def bounded_lstm(model: Path, samples: int, max_shape: dict = LSTM_MAX, reference=None) -> list[str]:
    rows = ["| length | host: max abs error | cortex-m4: max abs error | cortex-m4 instructions | "
            "instructions more than at length 1, per step |", "|---:|---:|---:|---:|---:|"]
    errors = {}
    for target in ("host", "cortex-m4"):
        _, results = verify_bounded(model, CompileOptions(load_target(target)), max_shape, extents=LSTM_LENGTHS,
                                    samples=samples, reference=reference)
        for extent, r in results:
            assert r.ok, (target, extent)
            errors[target, extent] = max(o.max_abs_error for o in r.outputs)
    profiles = profile_library(model, CompileOptions(load_target("cortex-m4")), [], max_shapes=max_shape,
                               extents=LSTM_LENGTHS)
    counts = [min(p.totals) for _, _, p in profiles]
    for extent, count in zip(LSTM_LENGTHS, counts):
        step = "" if extent == 1 else _n((count - counts[0]) // (extent - 1))
        rows.append(f"| {extent} | {errors['host', extent]:.3g} | {errors['cortex-m4', extent]:.3g} | {_n(count)} | "
                    f"{step} |")
    return rows


def tflite_lstm(folder: Path, dtype: str, samples: int) -> list[str]:
    """The TFLite LSTM with its steps axis open, compiled once for 64 steps; the reference at T
    steps is the same model (same weights) written with T steps."""
    sys.path[:0] = [str(ROOT / "tests")]  # the test writers import each other as top-level modules
    from tflite_recurrent_models import lstm_model

    shape = dict(features=8, hidden=32, dtype=dtype)
    model = folder / f"lstm_{dtype}.tflite"
    model.write_bytes(lstm_model(steps=LSTM_LENGTHS[-1], open_steps=True, **shape))

    def reference(steps: int) -> Path:
        path = folder / f"lstm_{dtype}_{steps}_steps.tflite"
        path.write_bytes(lstm_model(steps=steps, **shape))
        return path

    return bounded_lstm(model, samples, {"x": (1, LSTM_LENGTHS[-1], 8)}, reference)


def shared_kernels(model: Path, target: str, variants: list[str]) -> str:
    lib = compile_variants(model, CompileOptions(load_target(target)), parse_variants(variants, model))
    own = sorted({k for kernels in lib.kernels.own.values() for k in kernels})
    return (f"Kernels defined once in `{lib.name}_kernels.c` and called by every variant: "
            f"{', '.join(k.kernel for k in lib.kernels.shared) or 'none'}; kept in a variant's .c: "
            f"{', '.join(own) or 'none'}.")


def two_models(samples: int) -> list[str]:
    models = [MLPERF / "kws_ref_model.tflite", MLPERF / "vww_96_int8.tflite"]
    options = CompileOptions(load_target("cortex-m4"))
    chain, results = verify_models(models, options, samples=samples, seed=0)
    from codegen.variants.build import compile_models

    lib = compile_models(models, options)
    one = _sizes_of(lib.files, options.target)
    rows = ["| build | arena B | weights B | flash B | RAM B | checked against TFLite Micro in one image |",
            "|---|---:|---:|---:|---:|---|"]
    separate = []
    for model in models:
        build = compile_model(model, options)
        s = _sizes_of(build.files, options.target)
        separate.append(s)
        rows.append(f"| separate: {model.name} | {_n(build.manifest['arena_bytes'])} | "
                    f"{_n(build.manifest['weights_bytes'])} | {_n(s.flash)} | {_n(s.ram)} | |")
    total = _sum(separate)
    verdict = ", ".join(f"{name}: {'bit-exact' if r.ok and all(o.max_abs_error == 0 for o in r.outputs) else 'FAIL'}"
                        for name, r in results)
    rows.append(f"| two separate builds | {_n(sum(m.result.manifest['arena_bytes'] for m in lib.members))} | "
                f"{_n(sum(m.result.manifest['weights_bytes'] for m in lib.members))} | {_n(total.flash)} | "
                f"{_n(total.ram)} | |")
    rows.append(f"| **one library, shared arena** | **{_n(lib.arena_bytes)}** | "
                f"**{_n(sum(m.result.manifest['weights_bytes'] for m in lib.members))}** | **{_n(one.flash)}** | "
                f"**{_n(one.ram)}** | {verdict} ({samples} samples, QEMU mps2-an386) |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "VARIANTS.md")
    ap.add_argument("--samples", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kiln-bench-models-") as tmp:
        seq, cnn = Path(tmp) / "seqcls.onnx", Path(tmp) / "batchcnn.onnx"
        onnx.save(seq_classifier(), seq)
        onnx.save(batch_cnn(), cnn)
        flags = ", ".join(f"`--variant {v}`" for v in SEQ_VARIANTS)
        lines = ["# Shape variants and several models in one library", "",
                 "`python -m bench.variants` (see its docstring). Flash and RAM: the generated .c files compiled "
                 "with the target's compiler and flags and `-ffunction-sections -fdata-sections`, summed over "
                 "the object files by `arm-none-eabi-size` (flash = text + rodata + data, RAM = data + bss; "
                 "a separate build's kernels are static functions of its own .c, so they count once per build; "
                 "the library defines each kernel its variants share once, in `N_kernels.c`, unless "
                 "`--variant-kernels own`, the default off bare-metal targets: a shared kernel is not "
                 "specialised by the compiler for each call's constant parameters, as the instruction tables show).",
                 "", "## A sequence model, three lengths, cortex-m4", "",
                 f"`tests/variants/models.py: seq_classifier` (float32, input x [1, 8, seq]) with {flags}.", ""]
        lines += library_vs_separate(seq, "cortex-m4", SEQ_VARIANTS)
        lines += ["", shared_kernels(seq, "cortex-m4", SEQ_VARIANTS)]
        lines += ["", "Each variant as it links in the library, against onnxruntime "
                  f"({args.samples} random samples):", ""]
        lines += verify_rows(seq, ["host", "cortex-m4"], SEQ_VARIANTS, args.samples)
        lines += ["", "Instructions on the Cortex-M4 (QEMU mps2-an386, counting plugin):", ""]
        lines += instruction_rows(seq, "cortex-m4", SEQ_VARIANTS)
        lines += ["", "## A CNN with batch 1 and batch 4, cortex-a72 (qemu-aarch64)", "",
                  "`tests/variants/models.py: batch_cnn` (float32, image [batch, 3, 16, 16]).", ""]
        lines += verify_rows(cnn, ["cortex-a72"], BATCH_VARIANTS, args.samples)
        lines += [""]
        lines += instruction_rows(cnn, "cortex-a72", BATCH_VARIANTS)
        kws = MLPERF / "kws_ref_model.tflite"
        lines += ["", "## KWS int8 with batch 1 and batch 2, cortex-m4", "",
                  "MLPerf Tiny `kws_ref_model.tflite` (its batch axis open: -1 in the input's shape signature) "
                  f"with `--variant {KWS_VARIANTS[0]}` and `--variant {KWS_VARIANTS[1]}`; each variant checked in "
                  "QEMU against TFLite Micro running the model written at that batch (bit-exact when the error "
                  "is 0). The Cortex-M kernels (CMSIS-style DSP) lose little when shared.", ""]
        lines += verify_rows(kws, ["cortex-m4"], KWS_VARIANTS, args.samples)
        lines += [""]
        lines += instruction_rows(kws, "cortex-m4", KWS_VARIANTS)
        lines += ["", "## Two models, one arena, cortex-m4", "",
                  "`kiln build kws_ref_model.tflite vww_96_int8.tflite --target cortex-m4` against two separate "
                  "builds; `kiln verify` of the two models runs both in one firmware image from the one arena.", ""]
        lines += two_models(args.samples)
        lstm = Path(tmp) / "lstmtag.onnx"
        onnx.save(lstm_tagger(), lstm)
        lines += ["", "## An LSTM with a bounded time axis, compiled once", "",
                  "`tests/variants/models.py: lstm_tagger` (float32 ONNX LSTM, hidden 32, over x [seq, 1, 8], and a "
                  "per-step classifier) built with `--max-shape x=64,1,8`: one build, arena sized for 64 steps, "
                  "`lstmtag_run_extent(..., extent)`. The LSTM takes the extent as its sequence length and loops "
                  "that many steps; the per-step classifier after it still runs over the 64 rows (its part "
                  "is the constant in the counts).", ""]
        lines += bounded_lstm(lstm, args.samples)
        for dtype, what in (("float32", "LiteRT"), ("int8", "TFLite Micro, bit-exact when the error is 0")):
            lines += ["", f"### TFLite UNIDIRECTIONAL_SEQUENCE_LSTM, {dtype}", "",
                      f"`tests/tflite_recurrent_models.py: lstm_model` ({dtype}, hidden 32, x [1, steps, 8], the "
                      "steps axis open: -1 in its shape signature) built with `--max-shape x=1,64,8`; checked at "
                      f"each length against {what}, running the same model written with that many steps "
                      f"({args.samples} samples in a row, the LSTM's state carried from one to the next). The "
                      "LSTM runs `extent` steps; the transposes around it still move the 64 rows.", ""]
            lines += tflite_lstm(Path(tmp), dtype, args.samples)
    args.out.write_text("\n".join(lines) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
