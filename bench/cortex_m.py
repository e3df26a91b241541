"""Cortex-M benchmark: exact instructions per inference of the MLPerf Tiny int8 models on the
emulated M4, M7 and M55 boards, Kiln's DSP / Helium kernels against Kiln's portable reference
kernels, next to TFLite Micro + CMSIS-NN on the same boards; flash and RAM of
each firmware.

Run from the repository root:  python -m bench.cortex_m  [--out bench/CORTEX_M.md] [--peer-firmware DIR]

Counts come from `kiln profile`'s machinery (codegen/verify/profile.py: the QEMU plugin counts
every executed instruction between the markers around the model call), one inference on a
fixed random int8 input. Sizes come from arm-none-eabi-size on the firmware (the model plus
the test harness and startup code; the samples live outside the budget) and on the model's
objects alone; the stack is the harness's measured high-water mark. TFLite Micro + CMSIS-NN is
not built here (its code stays outside the repository). With `--peer-firmware DIR` its firmware,
prebuilt as bench/peers/README.md says (DIR/<target>/<model stem>.elf), runs in this same run on
the same boards under the same plugin (bench/peers/tflm_firmware.py) and its figures are written
to bench/peers/tflm_cmsis_nn.json; without it they are read from that file, and a target missing
there falls back to the M4 figures published in shared/models/README.md, marked as such.
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import subprocess
import tempfile
from pathlib import Path

from bench import cortex_m_code, cortex_m_streaming
from bench.peers import tflm_firmware
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.profile import Profile, build_plugin, profile_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT.parent / "shared" / "models" / "mlperf_tiny"
INT8_MODELS = [("KWS", "kws_ref_model.tflite"), ("VWW", "vww_96_int8.tflite"),
               ("IC", "pretrainedResnet_quant.tflite"), ("AD", "ad01_int8.tflite"),
               ("streaming wake word", "str_ww_ref_model.tflite")]
TARGETS = ["cortex-m4", "cortex-m7", "cortex-m55"]
# shared/models/README.md: TFLite Micro (arm-none-eabi-gcc 12.2, -O2) on QEMU mps2-an386 (M4F),
# one Invoke(): instructions with the reference and with the CMSIS-NN kernels, arena, flash.
TFLM_M4 = {"KWS": (43_114_455, 7_699_864, 22_820, 147_908),
           "VWW": (100_482_043, 24_101_898, 100_708, 427_260),
           "IC": (107_490_876, 29_863_324, 54_996, 187_456),
           "AD": (1_953_946, 582_926, 2_580, 318_320),
           "streaming wake word": (8_299_807, 2_227_075, 16_596, 165_348)}
PEERS_FILE = ROOT / "bench" / "peers" / "tflm_cmsis_nn.json"
KERNEL_GROUPS = [("conv", "conv2d_s8"), ("conv + residual add (fused)", "conv2d_add_s8"),
                 ("depthwise", "depthwise_conv2d_s8"), ("fully connected", "fully_connected_s8"), ("add", "add_bcast_s8"), ("avg pool", "average_pool2d_s8"), ("softmax", "softmax_s8")]


def profile(model: Path, target: str, reference: bool, plugin: Path, optimize: str = "speed") -> Profile:
    t = load_target(target)
    if reference:
        t = dataclasses.replace(t, variants=("reference",))
    return profile_model(model, CompileOptions(t, optimize=optimize), samples=1, seed=0, plugin=plugin)


def _fmt(n: int) -> str:
    return f"{n:,}"


def _variant(p: Profile) -> str:
    names = sorted({c.variant for c in p.calls if c.variant != "reference"})
    return "+".join(names) or "reference"


def _toolchain() -> str:
    gcc = subprocess.run(["arm-none-eabi-gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    qemu = subprocess.run(["qemu-system-arm", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return f"{gcc}; {qemu}"


def _commit() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


@dataclasses.dataclass(frozen=True)
class PeerFigures:
    """TFLite Micro + CMSIS-NN for one model on one target: measured, or published (M4 only)."""
    instructions: int
    arena: int
    flash: int  # text + rodata + data of its firmware
    ram: int | None  # data + bss (arena at its smallest) + stack; not published
    mark: str  # "" measured (in this run with --peer-firmware), "\u2021" an earlier run's, "\u2020" published


def peer_figures(name: str, target: str, peers: dict, same_run: set[str] | None = None) -> PeerFigures:
    m = peers.get(target, {}).get(name)
    if m is not None:
        return PeerFigures(m["instructions"], m["arena"], m["text"] + m["rodata"] + m["data"],
                           m["data"] + m["bss"] + m["stack"], "\u2021" if same_run is not None and target not in same_run else "")
    _, cmsis, arena, flash = TFLM_M4[name]
    return PeerFigures(cmsis, arena, flash, None, "\u2020")


def _peer(n: int, p: PeerFigures) -> str:
    return f"{_fmt(n)}{p.mark}"


def render(results: dict, toolchain: str, peers: dict | None = None, code: list[str] | None = None,
           same_run: set[str] | None = None, streaming: list[str] | None = None) -> str:
    """`same_run`: the targets whose peer firmware ran in this run (--peer-firmware)."""
    peers = {} if peers is None else peers
    command = "python -m bench.cortex_m" + (" --peer-firmware DIR" if same_run is not None else "")
    how = (f"measured in this same run from its prebuilt firmware on {', '.join(sorted(same_run))} "
           "(`--peer-firmware DIR`, DIR/<target>/<model>.elf; \u2021: no firmware for that target in DIR, the "
           "figure of an earlier run kept in bench/peers/tflm_cmsis_nn.json)"
           if same_run is not None else "read from bench/peers/tflm_cmsis_nn.json, measured by an earlier run")
    lines = ["# Cortex-M: instructions per inference, flash and RAM (MLPerf Tiny, int8)", "",
             f"Command: `{command}` (from the repository root; commit {_commit()}).  ",
             f"Toolchain and emulator: {toolchain}; host {platform.machine()}, Python {platform.python_version()}.",
             "",
             "Exact executed instructions of one inference (the call into the generated model to its return), "
             "counted in QEMU by the project's TCG plugin on the boards of `boards/` (M4: mps2-an386, M7: "
             "mps2-an500, M55: mps3-an547), on a fixed random int8 input (the counts do not depend on the "
             "values except for a few branches in softmax and activation clamps). *Kiln fast* is the target's "
             "kernel variants (DSP extension with ACLE intrinsics and a little inline assembly on M4/M7; Helium "
             "on M55, DSP kernels where no Helium kernel exists), *Kiln reference* the same compiler with the "
             "portable C kernels only. Every fast build is bit-exact with TFLite Micro (`pytest tests/cortex_m "
             "-m slow`, 20 samples per model and target; `tests/cortex_m/test_dsp_kernels.py` per kernel).",
             "",
             "*TFLM + CMSIS-NN*: TFLite Micro with its CMSIS-NN kernels built for the same board, run on the "
             "same QEMU board under the same plugin, the second of two `Invoke()`s on the same kind of input, "
             f"{how} (bench/peers/README.md says how the firmware is built). "
             "\u2020: not measured for that target; the M4 figure published in shared/models/README.md. "
             "*TFLM reference*: TFLite Micro with its reference kernels on the M4, published there.", ""]
    lines += ["## Instructions per inference", "",
              "| model | target | Kiln fast | Kiln reference | fast vs reference | TFLM reference (M4) | "
              "TFLM + CMSIS-NN | TFLM + CMSIS-NN / Kiln fast |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, _ in INT8_MODELS:
        tflm_ref = TFLM_M4[name][0]
        for target in TARGETS:
            fast, ref = results[name][target]
            p = peer_figures(name, target, peers, same_run)
            lines.append(f"| {name} | {target} ({_variant(fast)}) | {_fmt(fast.totals[0])} | {_fmt(ref.totals[0])} | "
                         f"{ref.totals[0] / fast.totals[0]:.2f}x | {_fmt(tflm_ref)} | {_peer(p.instructions, p)} | "
                         f"{p.instructions / fast.totals[0]:.2f}x |")
    lines += ["", "## Where the instructions go (M4, Kiln fast)", "",
              "| model | " + " | ".join(g for g, _ in KERNEL_GROUPS) + " | other |",
              "|---|" + "---:|" * (len(KERNEL_GROUPS) + 1)]
    for name, _ in INT8_MODELS:
        fast = results[name]["cortex-m4"][0]
        by: dict[str, int] = {}
        for c in fast.calls:
            by[c.kernel] = by.get(c.kernel, 0) + c.instructions[0]
        cells = [_fmt(by.pop(k)) if k in by else "" for _, k in KERNEL_GROUPS]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {_fmt(sum(by.values())) if by else ''} |")
    lines += ["", "## Flash and RAM", "",
              "Bytes from arm-none-eabi-size. *Model*: the generated code and constants alone (`N.c`, "
              "`N_weights.c` objects): flash = text + rodata, RAM = data + bss (the arena). *Firmware*: the "
              "linked image with the test harness and startup code: flash = text + rodata, RAM = data + bss + "
              "the stack's measured high-water mark. TFLM + CMSIS-NN: the smallest arena its interpreter runs in, "
              "and its firmware (the interpreter, the model's operators, the `.tflite` flatbuffer, startup) "
              "counted the same way: flash = text + rodata + data, RAM = data + bss + stack.", "",
              "| model | target | model flash | model RAM | firmware flash | firmware RAM (stack) | "
              "reference kernels: firmware flash | TFLM arena | TFLM + CMSIS-NN firmware flash | "
              "TFLM + CMSIS-NN firmware RAM |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, _ in INT8_MODELS:
        for target in TARGETS:
            fast, ref = results[name][target]
            m, f = fast.model_sizes, fast.firmware_sizes
            stack = fast.stack_bytes or 0
            p = peer_figures(name, target, peers, same_run)
            peer_ram = _peer(p.ram, p) if p.ram is not None else "n/a (not published)"
            lines.append(f"| {name} | {target} | {_fmt(m.text + m.rodata)} | {_fmt(m.data + m.bss)} | "
                         f"{_fmt(f.text + f.rodata)} | {_fmt(f.data + f.bss + stack)} ({_fmt(stack)}) | "
                         f"{_fmt(ref.firmware_sizes.text + ref.firmware_sizes.rodata)} | {_peer(p.arena, p)} | "
                         f"{_peer(p.flash, p)} | {peer_ram} |")
    lines += ["", "Kiln's arena (the model's RAM less a few bytes of data) includes the fast kernels' scratch "
              "buffers — im2col columns and accumulators of the convolution, the int16 input row of the fully "
              "connected kernel (where that copy is no larger than the layer's input and output; otherwise "
              "it reads the int8 row in place), the padded input rows of the depthwise kernel — which the "
              "memory planner places in the gaps of the activations' lifetimes where it can, and takes the "
              "overlaps those kernels declare (a convolution's or depthwise layer's output over its dying "
              "input; bench/MEMORY.md, \"Arena on the fast Cortex-M kernels\"). Flash: the repacked GEMM weights "
              "take the bytes of the int8 weights (padded to whole words and blocks), except the DSP "
              "convolutions of 16 or more output pixels, whose weights are widened to int16 at compile time "
              "(twice the bytes, so that the inner loop does not unpack them; not with `--optimize size`, "
              "codegen/kernels/cortex_m_dsp/conv2d_s8.py), the DSP depthwise "
              "weights twice that (int16 lanes, so that the inner loop does not unpack them), and the "
              "per-channel constants 16 bytes per output channel (reference kernels: 12).", ""]
    lines += ["Beyond MLPerf Tiny (a MobileNetV2 residual pair, an inception-style block with max pools and a "
              "concatenation, a small U-Net, a wide MLP): bench/CORTEX_M_EXTRA.md. The cost model's estimate "
              "against these counts: bench/COST_FIT_CORTEX_M.md.", ""]
    return "\n".join(lines + (code or []) + (streaming or []))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "CORTEX_M.md")
    ap.add_argument("--peer-firmware", type=Path, metavar="DIR",
                    help="prebuilt TFLite Micro + CMSIS-NN firmware, DIR/<target>/<model stem>.elf "
                         "(bench/peers/README.md): measured in this run and written to " + str(PEERS_FILE.relative_to(ROOT)))
    args = ap.parse_args(argv)
    results: dict = {}
    peers, same_run = tflm_firmware.load(PEERS_FILE), None
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as tmp:
        plugin = build_plugin(Path(tmp))
        for name, fname in INT8_MODELS:
            results[name] = {}
            for target in TARGETS:
                fast = profile(MODELS / fname, target, False, plugin)
                ref = profile(MODELS / fname, target, True, plugin)
                results[name][target] = (fast, ref)
                print(f"{name:20s} {target:11s} fast {fast.totals[0]:>12,}  reference {ref.totals[0]:>12,}", flush=True)
        size_insns = {name: (results[name]["cortex-m4"][0].totals[0],
                             profile(MODELS / fname, "cortex-m4", False, plugin, "size").totals[0])
                      for name, fname in INT8_MODELS}
        streaming = cortex_m_streaming.measure(TARGETS, plugin)
        code = cortex_m_code.section(cortex_m_code.measure([(n, MODELS / f) for n, f in INT8_MODELS], TARGETS),
                                     size_insns)
        if args.peer_firmware is not None:
            models = [(n, MODELS / f) for n, f in INT8_MODELS] + [(cortex_m_streaming.NAME, cortex_m_streaming.MODEL)]
            same_run = tflm_firmware.measure_into(peers, args.peer_firmware, models, TARGETS, plugin)
            tflm_firmware.record(PEERS_FILE, peers, models, same_run)
    args.out.write_text(render(results, _toolchain(), peers, code, same_run,
                               cortex_m_streaming.section(streaming, peers, same_run)))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
