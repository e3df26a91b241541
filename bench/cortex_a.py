"""Cortex-A benchmark: exact instructions per inference of the MLPerf Tiny models on the
Cortex-A53, A72 and A76 targets under qemu-aarch64, Kiln against LiteRT with its XNNPACK
delegate measured in the same run with the same counting plugin (bench/litert_xnnpack.py);
with --reference also Kiln's NEON kernels against its portable reference kernels built for
the same core (`--kernels reference`) and, on the int8 models, SDOT (neon_dotprod) against
widening multiply-accumulate (the A76 restricted to `--kernels neon`).

Run from the repository root:  python -m bench.cortex_a  [--reference] [--peers cached]
[--out bench/CORTEX_A.md]. The first run fetches LiteRT's arm64 environment into
bench/.work/litert-aarch64 (Debian packages and PyPI wheels; see bench/litert_xnnpack.py).

Counts come from `kiln profile`'s machinery (codegen/verify/qemu_user.py: the QEMU plugin
counts every executed guest instruction between the A64 markers around the model call), one
inference on a fixed random input.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench import litert_xnnpack as peer
from bench.cortex_m import _commit, _fmt
from codegen.options import CompileOptions
from codegen.targets import load_target, with_kernels
from codegen.verify.profile import Profile, build_plugin, estimated_cycles, profile_model

ROOT = Path(__file__).resolve().parent.parent
# the checkout's sibling shared/ folder (a worktree's too: the first such folder above the root)
MODELS = next((d / "shared" / "models" / "mlperf_tiny" for d in ROOT.parents
               if (d / "shared" / "models" / "mlperf_tiny").is_dir()), ROOT.parent / "shared" / "models" / "mlperf_tiny")
INT8_MODELS = [("KWS", "kws_ref_model.tflite"), ("VWW", "vww_96_int8.tflite"),
               ("IC", "pretrainedResnet_quant.tflite"), ("AD", "ad01_int8.tflite"),
               ("streaming wake word", "str_ww_ref_model.tflite")]
FLOAT_MODELS = [("KWS", "kws_ref_model_float32.tflite"), ("VWW", "vww_96_float.tflite"),
                ("IC", "pretrainedResnet.tflite"), ("AD", "ad01_fp32.tflite")]
TARGETS = ["cortex-a53", "cortex-a72", "cortex-a76"]
SDOT_TARGET = "cortex-a76"
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


def _models():
    return [("int8", name, fname) for name, fname in INT8_MODELS] + [("float32", name, fname)
                                                                    for name, fname in FLOAT_MODELS]


def _peer_table(fast: dict, peers: dict) -> list[str]:
    lines = ["| model | dtype | " + " | ".join(f"{t}: Kiln | XNNPACK | ratio" for t in TARGETS) + " |",
             "|---|---|" + "---:|---:|---:|" * len(TARGETS)]
    for dtype, name, fname in _models():
        cells = []
        for t in TARGETS:
            k, x = fast[fname].get(t), peers.get((fname, t))
            cells += [_fmt(k.totals[0]) if k else "not run", _fmt(x.instructions) if x else "not measured",
                      f"{k.totals[0] / x.instructions:.2f}x" if k and x else ""]
        lines.append(f"| {name} | {dtype} | " + " | ".join(cells) + " |")
    return lines


def _reference_tables(fast: dict, ref: dict, mla: dict) -> list[str]:
    lines = ["", "## NEON kernels against the reference C kernels", "",
             "| model | dtype | target | NEON | reference (-O3) | reference / NEON |",
             "|---|---|---|---:|---:|---:|"]
    for dtype, name, fname in _models():
        for target in TARGETS:
            f, r = fast[fname][target], ref[fname][target]
            lines.append(f"| {name} | {dtype} | {target} ({_variant(f)}) | {_fmt(f.totals[0])} | "
                         f"{_fmt(r.totals[0])} | {r.totals[0] / f.totals[0]:.2f}x |")
    lines += ["", f"## SDOT against widening multiply-accumulate ({SDOT_TARGET}, int8)", "",
              f"The same {SDOT_TARGET} build with `--kernels neon` (SMULL/SMLAL2 into int16 pairs, SADALP into "
              "int32) and with its default variants (SDOT: 16 int8 products per instruction in the GEMM kernels).",
              "", "| model | SMULL/SMLAL (neon) | SDOT (neon_dotprod) | neon / SDOT | conv + FC, neon | "
              "conv + FC, SDOT |", "|---|---:|---:|---:|---:|---:|"]
    for name, fname in INT8_MODELS:
        m, s = mla[fname], fast[fname][SDOT_TARGET]
        gm, gs = _by_group(m), _by_group(s)
        gemm_m = gm.get("conv", 0) + gm.get("fully connected", 0)
        gemm_s = gs.get("conv", 0) + gs.get("fully connected", 0)
        lines.append(f"| {name} | {_fmt(m.totals[0])} | {_fmt(s.totals[0])} | {m.totals[0] / s.totals[0]:.2f}x | "
                     f"{_fmt(gemm_m)} | {_fmt(gemm_s)} |")
    return lines


def estimate(p: Profile) -> float | None:
    """Kiln's cycles estimate of one inference: each kernel call with a hot loop at that loop's
    llvm-mca instructions per cycle (codegen/verify/hot_loops.py), the other calls and the
    code between calls at one instruction per cycle; None without llvm-mca."""
    if not p.hot_loops:
        return None
    est = estimated_cycles(p)
    covered = sum(min(c.instructions) for c in p.calls if c.index in est)
    return sum(est.values()) + p.totals[0] - covered


def _estimate_table(fast: dict) -> list[str]:
    lines = ["", "## Kiln: instructions and the hot-loop throughput estimate", "",
             "*est. cycles*: each kernel call's instructions at the instructions per cycle that llvm-mca "
             "(LLVM 14, `-mcpu=<core>`) gives the kernel's hot loop as GCC emitted it, the rest at one per "
             "cycle (`kiln profile` prints the loops). An estimate of issue throughput only: no cache or memory "
             "stalls, prologues and tails at the loop's rate. *IPC*: instructions / est. cycles.", "",
             "| model | dtype | " + " | ".join(f"{t}: instructions | est. cycles | IPC" for t in TARGETS) + " |",
             "|---|---|" + "---:|---:|---:|" * len(TARGETS)]
    for dtype, name, fname in _models():
        cells = []
        for t in TARGETS:
            p = fast[fname].get(t)
            e = estimate(p) if p else None
            cells += [_fmt(p.totals[0]) if p else "not run", _fmt(round(e)) if e else "",
                      f"{p.totals[0] / e:.2f}" if p and e else ""]
        lines.append(f"| {name} | {dtype} | " + " | ".join(cells) + " |")
    return lines


def render(fast: dict, peers: dict, ref: dict, mla: dict, toolchain: str) -> str:
    lines = ["# Cortex-A: instructions per inference (MLPerf Tiny), Kiln and LiteRT + XNNPACK", "",
             f"Command: `python -m bench.cortex_a` (from the repository root; commit {_commit()}).  ",
             f"Toolchain and emulator: {toolchain}; host {platform.machine()}, Python {platform.python_version()}.  ",
             f"Peer: {peer.litert_version() or 'not measured'} (manylinux_2_27_aarch64 wheels) in Debian's arm64 "
             "python3.11, one thread, default XNNPACK delegate.", "",
             "Exact executed instructions of one inference, counted under `qemu-aarch64 -cpu <core>` by the "
             "project's TCG plugin (codegen/verify/plugin/insn_count.c) between A64 markers. *Kiln*: `kiln "
             "profile` of the statically linked executable built with `aarch64-linux-gnu-gcc -mcpu=<core> -O3` "
             "and the target's kernel variants (A53, A72: `neon`; A76: `neon_dotprod` for the GEMM kernels, "
             "then `neon`), the call into the generated model to its return, on a fixed random input. "
             "*XNNPACK*: LiteRT's interpreter with its default XNNPACK delegate on the same emulated core, its "
             "`invoke()` between two markers executed through ctypes (bench/peers/litert_invoke.py), the median "
             "over invokes 3-12 minus the count of an empty marker pair; XNNPACK picks its kernels from the "
             "sysroot's /proc/cpuinfo, whose CPU part is the emulated core's (bench/litert_xnnpack.py). "
             "*ratio*: Kiln / XNNPACK (below 1: Kiln executes fewer). Instruction counts are not cycles: on the "
             "out-of-order A72/A76 XNNPACK deliberately runs more instructions where that is faster; the in-order "
             "A53 is where counts track time best. Kiln's int8 builds are bit-exact with TFLite Micro and its "
             "float builds within tolerance of LiteRT (`pytest tests/cortex_a -m slow`). The float32 KWS model's "
             "convolutions are TFLite hybrid (int8 weights, float activations): Kiln quantizes the activations as "
             "LiteRT's builtin kernels do (bit-exact with them); XNNPACK uses its own asymmetric quantization, "
             "about 4e-2 relative away on this model.", "",
             "## Kiln against LiteRT + XNNPACK", ""]
    lines += _peer_table(fast, peers)
    if ref:
        lines += _reference_tables(fast, ref, mla)
    lines += _estimate_table(fast)
    lines += ["", "## Where Kiln's instructions go (Cortex-A53)", "",
              "| model | dtype | " + " | ".join(g for g, _ in KERNEL_GROUPS) + " | other |",
              "|---|---|" + "---:|" * (len(KERNEL_GROUPS) + 1)]
    for dtype, name, fname in _models():
        if "cortex-a53" not in fast[fname]:
            continue
        by = _by_group(fast[fname]["cortex-a53"])
        cells = [_fmt(by[g]) if g in by else "" for g, _ in KERNEL_GROUPS]
        lines.append(f"| {name} | {dtype} | " + " | ".join(cells) + f" | {_fmt(by.get('other', 0))} |")
    lines.append("")
    return "\n".join(lines)


def _peers(plugin: Path, cached_only: bool, log) -> dict:
    """LiteRT + XNNPACK per (model file, core); a failure is reported and leaves the cell empty."""
    out = {}
    for _, _, fname in _models():
        for t in TARGETS:
            try:
                out[(fname, t)] = (peer.cached(MODELS / fname, t) if cached_only
                                   else peer.measure(MODELS / fname, t, plugin))
            except peer.PeerError as e:
                log(f"LiteRT + XNNPACK, {fname} on {t}: {e}")
                continue
            if out[(fname, t)] is None:
                del out[(fname, t)]  # not cached yet
            else:
                log(f"LiteRT + XNNPACK, {fname} on {t}: {out[(fname, t)].instructions:,}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "CORTEX_A.md")
    ap.add_argument("--reference", action="store_true",
                    help="also Kiln's reference kernels and SMLAL against SDOT (three times the builds)")
    ap.add_argument("--peers", choices=("measure", "cached"), default="measure",
                    help="cached: only LiteRT figures measured before (bench/.work/litert-aarch64, else "
                         "bench/cortex_a_peers.json; no new runs)")
    args = ap.parse_args(argv)
    fast: dict = {}
    ref: dict = {}
    mla: dict = {}
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as tmp, ThreadPoolExecutor(1) as pool:
        plugin = build_plugin(Path(tmp))
        # LiteRT runs in qemu processes of their own: measured beside Kiln's builds, not after them
        peers = pool.submit(_peers, plugin, args.peers == "cached", print)
        for _, _, fname in _models():
            model = MODELS / fname
            fast[fname] = {t: profile(model, t, None, plugin) for t in TARGETS}
            if args.reference:
                ref[fname] = {t: profile(model, t, ("reference",), plugin) for t in TARGETS}
            print(f"{fname}: " + ", ".join(f"{t} {p.totals[0]:,}" for t, p in fast[fname].items()), flush=True)
        if args.reference:
            for _, fname in INT8_MODELS:
                mla[fname] = profile(MODELS / fname, SDOT_TARGET, ("neon",), plugin)
        peer_counts = peers.result()
    args.out.write_text(render(fast, peer_counts, ref, mla, _toolchain()))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
