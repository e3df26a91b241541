"""Cortex-A benchmark: exact instructions per inference of the MLPerf Tiny models on the
Cortex-A53 and Cortex-A55 targets under qemu-aarch64, Kiln's NEON kernels against Kiln's
portable reference kernels built for the same core with the same flags (`--kernels
reference`), and on the int8 models SDOT (neon_dotprod) against widening multiply-accumulate
(the A55 restricted to `--kernels neon`).

Run from the repository root:  python -m bench.cortex_a  [--out bench/CORTEX_A.md]

Counts come from `kiln profile`'s machinery (codegen/verify/qemu_user.py: the QEMU plugin
counts every executed guest instruction between the A64 markers around the model call), one
inference on a fixed random input.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import tempfile
from pathlib import Path

from bench.cortex_m import _commit, _fmt
from codegen.options import CompileOptions
from codegen.targets import load_target, with_kernels
from codegen.verify.profile import Profile, build_plugin, profile_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT.parent / "shared" / "models" / "mlperf_tiny"
INT8_MODELS = [("KWS", "kws_ref_model.tflite"), ("VWW", "vww_96_int8.tflite"),
               ("IC", "pretrainedResnet_quant.tflite"), ("AD", "ad01_int8.tflite"),
               ("streaming wake word", "str_ww_ref_model.tflite")]
FLOAT_MODELS = [("KWS", "kws_ref_model_float32.tflite"), ("VWW", "vww_96_float.tflite"),
                ("IC", "pretrainedResnet.tflite"), ("AD", "ad01_fp32.tflite")]
TARGETS = ["cortex-a53", "cortex-a55"]
KERNEL_GROUPS = [("conv", ("conv2d", "hybrid_conv2d")), ("depthwise", ("depthwise_conv2d",)),
                 ("fully connected", ("fully_connected",))]


def profile(model: Path, target: str, kernels: tuple[str, ...] | None, plugin: Path) -> Profile:
    t = load_target(target)
    if kernels is not None:
        t = with_kernels(t, kernels)
    return profile_model(model, CompileOptions(t), samples=1, seed=0, plugin=plugin)


def _variant(p: Profile) -> str:
    return "+".join(sorted({c.variant for c in p.calls if c.variant != "reference"})) or "reference"


def _by_group(p: Profile) -> dict[str, int]:
    """Instructions per kernel group (int8 and float kernels together)."""
    out: dict[str, int] = {}
    for c in p.calls:
        stem = c.kernel.split("__", 1)[0].rsplit("_", 1)[0]  # conv2d_s8, fused conv2d_f32__<digest>
        group = next((g for g, stems in KERNEL_GROUPS if stem in stems), "other")
        out[group] = out.get(group, 0) + c.instructions[0]
    return out


def _toolchain() -> str:
    return "; ".join(subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
                     for tool in ("aarch64-linux-gnu-gcc", "qemu-aarch64"))


def render(fast: dict, ref: dict, mla: dict, toolchain: str) -> str:
    lines = ["# Cortex-A: instructions per inference (MLPerf Tiny, NEON)", "",
             f"Command: `python -m bench.cortex_a` (from the repository root; commit {_commit()}).  ",
             f"Toolchain and emulator: {toolchain}; host {platform.machine()}, Python {platform.python_version()}.",
             "",
             "Exact executed instructions of one inference (the call into the generated model to its return), "
             "counted under `qemu-aarch64` by the project's TCG plugin on a fixed random input, for statically "
             "linked executables built with `aarch64-linux-gnu-gcc -mcpu=<core> -O3` (A53: `-cpu cortex-a53`; "
             "A55: `-cpu cortex-a76`, QEMU 7.2's Armv8.2-A dot-product model). *NEON* is the target's kernel "
             "variants (A53: `neon`, widening multiply-accumulate; A55: `neon_dotprod` SDOT for the GEMM "
             "kernels, `neon` for the others), *reference* the same target with `--kernels reference`: Kiln's "
             "portable C kernels, auto-vectorised by GCC at -O3. Every int8 build is bit-exact with TFLite Micro "
             "and every float build within tolerance of LiteRT (`pytest tests/cortex_a -m slow`, 20 samples per "
             "model and target). Instruction counts are not cycles: an SDOT or a 16-byte load counts one. "
             "The float32 KWS model's convolutions are TFLite hybrid (dynamic-range int8 weights, "
             "`hybrid_conv2d_f32`), which has no NEON kernel: its NEON build differs only in the depthwise "
             "and fully connected layers.", "",
             "## NEON kernels against the reference C kernels", "",
             "| model | dtype | target | NEON | reference (-O3) | reference / NEON |",
             "|---|---|---|---:|---:|---:|"]
    for dtype, models in (("int8", INT8_MODELS), ("float32", FLOAT_MODELS)):
        for name, fname in models:
            for target in TARGETS:
                f, r = fast[fname][target], ref[fname][target]
                lines.append(f"| {name} | {dtype} | {target} ({_variant(f)}) | {_fmt(f.totals[0])} | "
                             f"{_fmt(r.totals[0])} | {r.totals[0] / f.totals[0]:.2f}x |")
    lines += ["", "## SDOT against widening multiply-accumulate (Cortex-A55, int8)", "",
              "The same A55 build with `--kernels neon` (SMULL/SMLAL2 into int16 pairs, SADALP into int32) "
              "and with its default variants (SDOT: 16 int8 products per instruction in the GEMM kernels).", "",
              "| model | SMULL/SMLAL (neon) | SDOT (neon_dotprod) | neon / SDOT | conv + FC, neon | "
              "conv + FC, SDOT |",
              "|---|---:|---:|---:|---:|---:|"]
    for name, fname in INT8_MODELS:
        m, s = mla[fname], fast[fname]["cortex-a55"]
        gm, gs = _by_group(m), _by_group(s)
        gemm_m = gm.get("conv", 0) + gm.get("fully connected", 0)
        gemm_s = gs.get("conv", 0) + gs.get("fully connected", 0)
        lines.append(f"| {name} | {_fmt(m.totals[0])} | {_fmt(s.totals[0])} | {m.totals[0] / s.totals[0]:.2f}x | "
                     f"{_fmt(gemm_m)} | {_fmt(gemm_s)} |")
    lines += ["", "## Where the instructions go (Cortex-A53, NEON)", "",
              "| model | dtype | " + " | ".join(g for g, _ in KERNEL_GROUPS) + " | other |",
              "|---|---|" + "---:|" * (len(KERNEL_GROUPS) + 1)]
    for dtype, models in (("int8", INT8_MODELS), ("float32", FLOAT_MODELS)):
        for name, fname in models:
            by = _by_group(fast[fname]["cortex-a53"])
            cells = [_fmt(by[g]) if g in by else "" for g, _ in KERNEL_GROUPS]
            lines.append(f"| {name} | {dtype} | " + " | ".join(cells) + f" | {_fmt(by.get('other', 0))} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "CORTEX_A.md")
    args = ap.parse_args(argv)
    fast: dict = {}
    ref: dict = {}
    mla: dict = {}
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as tmp:
        plugin = build_plugin(Path(tmp))
        for _, fname in INT8_MODELS + FLOAT_MODELS:
            model = MODELS / fname
            fast[fname] = {t: profile(model, t, None, plugin) for t in TARGETS}
            ref[fname] = {t: profile(model, t, ("reference",), plugin) for t in TARGETS}
            print(f"{fname}: " + ", ".join(f"{t} {fast[fname][t].totals[0]:,} (reference {ref[fname][t].totals[0]:,})"
                                            for t in TARGETS), flush=True)
        for _, fname in INT8_MODELS:
            mla[fname] = profile(MODELS / fname, "cortex-a55", ("neon",), plugin)
    args.out.write_text(render(fast, ref, mla, _toolchain()))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
