"""Cortex-M benchmark beyond MLPerf Tiny: int8 architectures no one tuned the kernels for.

Run from the repository root:  python -m bench.cortex_m_extra  [--out bench/CORTEX_M_EXTRA.md]
[--peer-firmware DIR] [--write-models DIR]

Four small int8 TFLite models, written with the flatbuffer writer of tests/tflite_models.py
(random weights, fixed seeds): two MobileNetV2 inverted-residual blocks (1x1 expand + ReLU6,
3x3 depthwise + ReLU6, 1x1 project, residual ADD), an inception-style block (1x1 and 3x3
branches and a 3x3 max pool projected by a 1x1, joined by a channel CONCATENATION, then a 2x2
max pool), a small U-Net (a strided convolution down, one at the bottom, nearest-neighbour
upsampling, the skip joined by CONCATENATION, a convolution up) and a wide MLP (256 -> 512 ->
512 -> 10). Instructions per inference of Kiln's fast kernels and of its portable ones on the
M4, M7 and M55 boards, counted as bench/cortex_m.py counts them, beside TFLite Micro + CMSIS-NN's
second Invoke() on the same boards under the same plugin: measured in the same run from its
prebuilt firmware with `--peer-firmware DIR` (DIR/<target>/<model>.elf, the models as
`--write-models DIR` writes them; bench/peers/README.md) and written to
bench/peers/tflm_cmsis_nn.json, read from there without it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench.cortex_m import PEERS_FILE, TARGETS, _variant, profile
from bench.peers import tflm_firmware
from codegen.verify.profile import build_plugin

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from tflite_models import ModelWriter, TensorSpec, const  # noqa: E402  (the test suite's flatbuffer writer)


def _q(shape, scale, zp=0, **kw) -> TensorSpec:
    return TensorSpec(tuple(shape), "int8", scale=scale, zero_point=zp, **kw)


class _Net:
    """A ModelWriter with helpers for per-channel int8 layers (random weights of one seed)."""

    def __init__(self, seed: int):
        self.w, self.rng, self.n = ModelWriter(), np.random.default_rng(seed), 0

    def act(self, shape, scale=0.1, zp=3):
        self.n += 1
        return self.w.tensor(_q(shape, scale, zp, name=f"t{self.n}"))

    def weights(self, shape, channels, axis=0):
        wt = self.w.tensor(const(self.rng.integers(-127, 128, shape), "int8", quantized_dimension=axis,
                                 scale=list(self.rng.uniform(0.002, 0.01, channels)), zero_point=[0] * channels))
        return wt, self.w.tensor(const(self.rng.integers(-500, 500, (channels,)), "int32"))

    def conv(self, x, shape_in, co, k, stride=1, act="RELU"):
        n, h, w_, ci = shape_in
        wt, bias = self.weights((co, k, k, ci), co)
        out_shape = (n, -(-h // stride), -(-w_ // stride), co)
        y = self.act(out_shape)
        self.w.op("CONV_2D", [x, wt, bias], [y], {"padding": "SAME", "stride_w": stride, "stride_h": stride,
                                                 "fused_activation_function": act})
        return y, out_shape

    def depthwise(self, x, shape, act="RELU6"):
        c = shape[3]
        wt, bias = self.weights((1, 3, 3, c), c, axis=3)
        y = self.act(shape)
        self.w.op("DEPTHWISE_CONV_2D", [x, wt, bias], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                                           "depth_multiplier": 1, "fused_activation_function": act})
        return y

    def max_pool(self, x, shape, k, stride, padding, scale=0.1, zp=3):  # the input's quantization
        n, h, w_, c = shape
        out = (n, -(-h // stride), -(-w_ // stride), c) if padding == "SAME" else \
            (n, (h - k) // stride + 1, (w_ - k) // stride + 1, c)
        y = self.act(out, scale, zp)
        self.w.op("MAX_POOL_2D", [x], [y], {"padding": padding, "stride_w": stride, "stride_h": stride,
                                            "filter_width": k, "filter_height": k, "fused_activation_function": "NONE"})
        return y, out


def mobilenet_v2_blocks() -> bytes:
    net = _Net(11)
    shape = (1, 24, 24, 16)
    x = h = net.w.tensor(_q(shape, 0.1, 3, name="x"))
    for _ in range(2):
        e, es = net.conv(h, shape, 64, 1, act="RELU6")
        d = net.depthwise(e, es)
        p, _ = net.conv(d, es, 16, 1, act="NONE")
        s = net.act(shape)
        net.w.op("ADD", [p, h], [s], {"fused_activation_function": "NONE"})
        h = s
    return net.w.build([x], [h])


def inception_block() -> bytes:
    net = _Net(5)
    shape = (1, 16, 16, 32)
    x = net.w.tensor(_q(shape, 0.05, -2, name="x"))
    a, _ = net.conv(x, shape, 16, 1)
    b, _ = net.conv(x, shape, 24, 3)
    m, ms = net.max_pool(x, shape, 3, 1, "SAME", 0.05, -2)
    c, _ = net.conv(m, ms, 8, 1)
    y = net.act((1, 16, 16, 48))
    net.w.op("CONCATENATION", [a, b, c], [y], {"axis": 3, "fused_activation_function": "NONE"})
    z, _ = net.max_pool(y, (1, 16, 16, 48), 2, 2, "VALID")
    return net.w.build([x], [z])


def small_unet() -> bytes:
    net = _Net(7)
    shape = (1, 32, 32, 8)
    x = net.w.tensor(_q(shape, 0.1, 3, name="x"))
    e, es = net.conv(x, shape, 16, 3)
    d, ds = net.conv(e, es, 32, 3, stride=2)
    b, bs = net.conv(d, ds, 32, 3)
    size = net.w.tensor(const(np.array([32, 32]), "int32"))
    u = net.act((1, 32, 32, 32))
    net.w.op("RESIZE_NEAREST_NEIGHBOR", [b, size], [u], {"align_corners": False, "half_pixel_centers": False})
    j = net.act((1, 32, 32, 48))
    net.w.op("CONCATENATION", [u, e], [j], {"axis": 3, "fused_activation_function": "NONE"})
    y, _ = net.conv(j, (1, 32, 32, 48), 8, 3, act="NONE")
    return net.w.build([x], [y])


def wide_mlp() -> bytes:
    net = _Net(3)
    x = h = net.w.tensor(_q((1, 256), 0.05, -1, name="x"))
    k = 256
    for units, act in ((512, "RELU"), (512, "RELU"), (10, "NONE")):
        wt = net.w.tensor(const(net.rng.integers(-127, 128, (units, k)), "int8", scale=0.004, zero_point=0))
        bias = net.w.tensor(const(net.rng.integers(-500, 500, (units,)), "int32"))
        y = net.act((1, units))
        net.w.op("FULLY_CONNECTED", [h, wt, bias], [y], {"fused_activation_function": act})
        h, k = y, units
    return net.w.build([x], [h])


EXTRA = [("MobileNetV2 blocks", mobilenet_v2_blocks), ("inception block", inception_block),
         ("small U-Net", small_unet), ("wide MLP", wide_mlp)]


def _peer_cells(fast_insns: int, fast_arena: int, p: dict | None, mark: str) -> str:
    if p is None:
        return f"n/a | | {fast_arena:,} | n/a"
    return f"{p['instructions']:,}{mark} | {p['instructions'] / fast_insns:.2f}x | {fast_arena:,} | {p['arena']:,}{mark}"


def render(results: dict, peers: dict, same_run: set[str] | None) -> str:
    """`results`: {model name: {target: (fast, reference) Profile}}; `same_run`: the targets whose
    peer firmware ran in this run (None: no --peer-firmware)."""
    command = "python -m bench.cortex_m_extra" + (" --peer-firmware DIR" if same_run is not None else "")
    lines = ["# Cortex-M: instructions per inference beyond MLPerf Tiny (int8)", "",
             f"Command: `{command}` (from the repository root). " + " ".join(__doc__.split("\n\n")[2].split()), "",
             "| model | target (fast variants) | Kiln fast | Kiln reference | fast vs reference | TFLM + CMSIS-NN | "
             "TFLM + CMSIS-NN / Kiln fast | Kiln arena | TFLM arena | where (fast, top 3 calls) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, by_target in results.items():
        for target, (fast, ref) in by_target.items():
            top = sorted(fast.calls, key=lambda c: -c.instructions[0])[:3]
            where = ", ".join(f"{c.kernel} {c.instructions[0]:,}" for c in top)
            mark = "\u2021" if same_run is not None and target not in same_run else ""
            peer = _peer_cells(fast.totals[0], fast.arena_bytes, peers.get(target, {}).get(name), mark)
            lines.append(f"| {name} | {target} ({_variant(fast)}) | {fast.totals[0]:,} | {ref.totals[0]:,} | "
                         f"{ref.totals[0] / fast.totals[0]:.2f}x | {peer} | {where} |")
    lines += ["", "Every model is bit-exact with TFLite Micro on the M4, M7 and M55 boards (`kiln verify --samples 3`, "
              "run by hand). *TFLM arena*: the smallest arena TFLite Micro's interpreter runs the model in; "
              "*Kiln arena*: the fast build's arena (activations and the kernels' scratch). " +
              ("\u2021: no peer firmware for that target in DIR; the figure of an earlier run kept in "
               "bench/peers/tflm_cmsis_nn.json." if same_run is not None else
               "TFLM + CMSIS-NN figures read from bench/peers/tflm_cmsis_nn.json (an earlier run with "
               "`--peer-firmware DIR`).")]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "CORTEX_M_EXTRA.md")
    ap.add_argument("--peer-firmware", type=Path, metavar="DIR",
                    help="prebuilt TFLite Micro + CMSIS-NN firmware, DIR/<target>/<model>.elf: measured in this run")
    ap.add_argument("--write-models", type=Path, metavar="DIR",
                    help="write the models' .tflite files into DIR (to build the peer firmware from) and stop")
    args = ap.parse_args(argv)
    if args.write_models is not None:
        args.write_models.mkdir(parents=True, exist_ok=True)
        for _, make in EXTRA:
            (args.write_models / f"{make.__name__}.tflite").write_bytes(make())
        print(f"wrote {len(EXTRA)} models into {args.write_models}")
        return 0
    peers, same_run, results = tflm_firmware.load(PEERS_FILE), None, {}
    with tempfile.TemporaryDirectory(prefix="kiln-bench-extra-") as tmp:
        plugin = build_plugin(Path(tmp))
        models = []
        for name, make in EXTRA:
            path = Path(tmp) / f"{make.__name__}.tflite"
            path.write_bytes(make())
            models.append((name, path))
            results[name] = {}
            for target in TARGETS:
                results[name][target] = fast, ref = profile(path, target, False, plugin), profile(path, target, True, plugin)
                print(f"{name:20s} {target:11s} fast {fast.totals[0]:>12,}  reference {ref.totals[0]:>12,}", flush=True)
        if args.peer_firmware is not None:
            same_run = tflm_firmware.measure_into(peers, args.peer_firmware, models, TARGETS, plugin)
            tflm_firmware.record(PEERS_FILE, peers, models, same_run)
    args.out.write_text(render(results, peers, same_run))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
