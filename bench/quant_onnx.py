"""bench/QUANT_ONNX.md: onnxruntime-quantized models (bench/quant_onnx_models.py) run by Kiln
against onnxruntime, in LSB of the output scale, in both int8 numerics, and what each costs in
instructions on cortex-m4.

    .venv/bin/python -m bench.quant_onnx [--targets host,cortex-m4] [--samples 20] [--profile cortex-m4]

Each row: the largest distance in LSB over all samples and output elements, and how many
elements are off by how many LSB. Numerics "tflite" (the default): Kiln's int8 kernels
(TFLite's fixed-point requantization, round half away from zero) against onnxruntime at
ORT_ENABLE_BASIC, where its QLinear* kernels (QOperator) or DequantizeLinear -> float op ->
QuantizeLinear (QDQ) run as written; tolerance 1 LSB. Numerics "onnxruntime"
(`--numerics onnxruntime`): onnxruntime's arithmetic against onnxruntime at ORT_ENABLE_ALL with
`session.qdqisint8allowed` = 1, where QDQ groups run as the same QLinear* kernels (on x86 without
VNNI onnxruntime otherwise leaves int8 QDQ groups in float); tolerance 0. uint8 models have
7-bit weights (reduce_range, see bench/quant_onnx_models.py). quantize_dynamic models have
float outputs, judged relatively.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

from bench.quant_onnx_models import LINEAR_CNN, MEASURED_ONLY, VARIANTS, quantized
from codegen.errors import KilnError
from codegen.options import CompileOptions
from codegen.targets import load_target, with_kernels
from codegen.verify.compare import format_lsb_counts
from codegen.verify.profile import profile_model
from codegen.verify.run import verify_model

TABLE = Path(__file__).with_name("QUANT_ONNX.md")
NUMERICS = ("tflite", "onnxruntime")


def _label(v) -> list[str]:
    return [v.model, v.fmt, v.activations, "per channel" if v.per_channel else "per tensor"]


def _cells(path: Path, target: str, numerics: str, samples: int) -> list[str]:
    try:
        (o,) = verify_model(path, CompileOptions(load_target(target), numerics=numerics), samples=samples).outputs
    except KilnError as err:
        return ["-", "-", f"refused: {err}"]
    if o.lsb is None:  # quantize_dynamic: float outputs
        return ["(float)", f"{o.mismatches} / {o.elements}", f"max relative error {o.max_rel_error:.2g} (tolerance 1e-5)"]
    return [str(o.max_lsb), f"{o.elements_off} / {o.elements}", format_lsb_counts(o)]


def rows(targets: list[str], samples: int, tmp: Path) -> list[str]:
    out = []
    for v in LINEAR_CNN + VARIANTS + MEASURED_ONLY:
        path = quantized(v, tmp)
        for numerics in NUMERICS:
            for target in targets:
                shown = "float32, exact integer sums" if v.fmt == "dynamic" else numerics
                out.append("| " + " | ".join(_label(v) + [target, shown] + _cells(path, target, numerics, samples)) + " |")
                print(out[-1], flush=True)
    return out


def instruction_rows(target: str, tmp: Path) -> list[str]:
    """Instructions per inference (one sample) of every static model: TFLite's numerics on the
    target's kernels and on the reference kernels only; onnxruntime's numerics on the target's
    kernels (its DSP variant where it has one) and on the portable onnxruntime kernels only."""
    out = []
    base = load_target(target)
    builds = (("tflite", base), ("tflite", with_kernels(base, ("reference",))),
              ("onnxruntime", base), ("onnxruntime", replace(base, variants=("onnxruntime",) + base.variants)))
    for v in LINEAR_CNN + [v for v in VARIANTS if v.fmt != "dynamic"] + MEASURED_ONLY:
        path = quantized(v, tmp)
        counts = [min(profile_model(path, CompileOptions(t, numerics=n)).totals) for n, t in builds]
        ratio = counts[2] / counts[0]
        out.append("| " + " | ".join(_label(v) + [f"{c:,}" for c in counts] + [f"{ratio:.2f}"]) + " |")
        print(out[-1], flush=True)
    return out


def tflite_rows(target: str, folder: Path) -> list[str]:
    """Instructions per inference of the TFLite conversions (bench/quant_onnx_tflite.py) in
    `folder`, compiled by Kiln (TFLite's numerics, bit-exact with TFLite Micro)."""
    out = []
    for name in ("cnn", "mlp"):
        path = folder / f"{name}.tflite"
        if path.exists():
            prof = profile_model(path, CompileOptions(load_target(target)))
            out.append(f"| {name} | TFLite conversion, int8 | {min(prof.totals):,} |")
            print(out[-1], flush=True)
    return out


NOTES = (Path(__file__).with_name("quant_onnx_notes.md"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="host", help="comma-separated Kiln targets (default host)")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--profile", default="cortex-m4", help="target whose instructions are counted ('' for none)")
    ap.add_argument("--tflite", type=Path, help="folder of the TFLite conversions (bench/quant_onnx_tflite.py)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = rows(args.targets.split(","), args.samples, Path(tmp))
        counts = instruction_rows(args.profile, Path(tmp)) if args.profile else []
        converted = tflite_rows(args.profile, args.tflite) if args.profile and args.tflite else []
    TABLE.write_text(render(args, table, counts, converted))


def render(args, table: list[str], counts: list[str], converted: list[str]) -> str:
    """bench/QUANT_ONNX.md from the rows (the command line's `args`), the notes last."""
    head = ["| model | format | activations | weights | target | numerics | max LSB | elements off | distances |",
            "|---|---|---|---|---|---|---|---|---|"]
    about = __doc__.split("\n\n")[2].strip()
    tflite = " --tflite DIR" if args.tflite else ""
    command = (f"Command: `.venv/bin/python -m bench.quant_onnx --targets {args.targets} --samples {args.samples} "
               f"--profile {args.profile}{tflite}` ({args.samples} random standard-normal inputs per row, seed 0; "
               "DIR made by bench/quant_onnx_tflite.py).")
    text = ("# Quantized ONNX (onnxruntime's quantizers) against onnxruntime\n\n" + about + "\n\n"
            + command + "\n\n" + "\n".join(head + table) + "\n")
    if counts:
        text += (f"\n## Instructions per inference on {args.profile}\n\n"
                 "One inference (`kiln profile`, exact instruction count in QEMU): TFLite's numerics on the "
                 "target's kernels (DSP) and on the reference kernels only (`--kernels reference`); onnxruntime's "
                 "numerics on the target's kernels (the onnxruntime_dsp fully connected kernel, the portable "
                 "onnxruntime kernels otherwise) and on the portable onnxruntime kernels only; the last column "
                 "divides onnxruntime's numerics by TFLite's, both on the target's kernels.\n\n"
                 "| model | format | activations | weights | tflite | tflite, reference kernels | onnxruntime "
                 "| onnxruntime, portable kernels | onnxruntime / tflite |\n"
                 "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(counts) + "\n")
    if converted:
        text += ("\nThe same networks converted by TensorFlow's TFLiteConverter (full int8, float input and output, "
                 "the same calibration inputs; bench/quant_onnx_tflite.py), compiled by Kiln:\n\n"
                 "| model | form | instructions |\n|---|---|---|\n" + "\n".join(converted) + "\n")
    return text + "\n" + NOTES.read_text()

if __name__ == "__main__":
    main()
