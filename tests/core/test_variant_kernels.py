"""Every variant kernel of the registry computes what its reference kernel computes, run.

Walks codegen/kernels/: for each variant, one graph holding a probe layer per kernel the
variant implements (`PROBES`), built twice for a target that runs the variant first: once as
the target is (each probed call must be the variant's: select() chose it) and once with the
reference kernels only (`with_kernels(target, ())`), both run on the same emulated core
(qemu-system-arm for Cortex-M, qemu-aarch64 for Cortex-A). int8 outputs and the float kernels
that do the reference's IEEE operations in its order must be equal bit for bit; the float
kernels that fuse multiply-adds or sum in another order (`ROUNDED`) agree to
codegen/verify/compare.py's float tolerance. The many shapes of each kernel's paths are the
variants' own tests (tests/cortex_m/test_dsp_kernels.py, tests/cortex_a/test_neon_*.py);
tests/core/test_kernel_registry.py checks that every variant kernel has a probe here.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

from codegen.frontends.tflite import load_bytes
from codegen.ir import Graph, GraphBuilder, Quant
from codegen.kernels.spec import REFERENCE, registered
from codegen.targets import Target, available_targets, load_target, with_kernels
from codegen.verify import qemu, qemu_user
from codegen.verify.compare import compare_output
from codegen.verify.samples import random_samples
from helpers import build_graph
# tests/ops, a namespace package beside this folder
from ops.linear_testing import (float_layer, int8_add, int8_average_pool, int8_concat, int8_conv_add, int8_layer,
                                int8_max_pool, merge)
from ops.matmul_svdf_cases import matmul_graph, svdf_graph
from ops.lstm_testing import int8_lstm


def _binary(op: str, a_shape, b_shape, activation: str) -> Graph:
    b = GraphBuilder(op.lower())
    y = b.node(op, [b.input("a", "float32", a_shape), b.input("b", "float32", b_shape)], activation=activation)
    return b.output(y).build()


def _pool(op: str, shape, kernel, strides, pads) -> Graph:
    b = GraphBuilder(op.lower())
    y = b.node(op, [b.input("x", "float32", shape)], kernel=kernel, strides=strides, pads=pads, activation="none")
    return b.output(y).build()


def _softmax() -> Graph:
    b = GraphBuilder("softmax")
    return b.output(b.node("Softmax", [b.input("x", "float32", (3, 12))], axis=-1, beta=0.5)).build()


def _hybrid() -> Graph:
    from ops.test_hybrid_conv2d import hybrid_model

    return load_bytes(hybrid_model((1, 5, 5, 16), (6, 3, 3, 16), {"padding": "SAME"}, "channel", seed=3))


def _resize_bilinear(shape, size) -> Graph:
    q = Quant.of(0.05, -7)
    b = GraphBuilder("resize_bilinear")
    x = b.input("rsx", "int8", shape, q)
    return b.output(b.node("ResizeBilinearInt8", [x], size=size, half_pixel_centers=1, quant=q)).build()


def _gather(shape, axis, indices) -> Graph:
    q = Quant.of(0.05, 3)
    b = GraphBuilder("gather")
    x = b.input("gx", "int8", shape, q)
    return b.output(b.node("Gather", [x, b.const("gi", np.array(indices, np.int32))], axis=axis, quant=q)).build()


def _matmul_f32(a_shape, b_shape) -> Graph:
    b = GraphBuilder("matmul_f32")
    y = b.node("MatMul", [b.input("mf_a", "float32", a_shape), b.input("mf_b", "float32", b_shape)])
    return b.output(y).build()


# kernel -> layers whose lowering requests it (a general and a special path where a kernel has both)
PROBES: dict[str, Callable[[], list[Graph]]] = {
    "conv2d_s8": lambda: [int8_layer("Conv2D", (1, 7, 7, 3), (8, 3, 3, 3), seed=1, pads=(1, 1, 1, 1)),
                          int8_layer("Conv2D", (1, 5, 5, 16), (6, 1, 1, 16), seed=2, in_zp=-128),
                          int8_layer("Conv2D", (1, 6, 6, 8), (8, 3, 3, 8), seed=9600, pads=(1, 1, 1, 1)),
                          int8_layer("Conv2D", (1, 13, 6, 1), (8, 5, 4, 1), seed=9601, strides=(2, 2),
                                     pads=(2, 1, 2, 2)),
                          # window rows of whole 16-byte groups, read in place inside the image
                          int8_layer("Conv2D", (1, 6, 5, 16), (5, 3, 3, 16), seed=9300, pads=(1, 1, 1, 1)),
                          int8_layer("Conv2D", (1, 5, 3, 8), (7, 1, 1, 8), seed=9301),  # window of 8 bytes
                          # NEON: a last group of 8 bytes (40 = 16 + 16 + 8; 18 = 16 + 2), a last pixel alone
                          int8_layer("Conv2D", (2, 5, 5, 40), (9, 1, 1, 40), seed=10000, in_zp=-128),
                          int8_layer("Conv2D", (1, 9, 9, 2), (6, 3, 3, 2), seed=10001, strides=(2, 2),
                                     pads=(1, 1, 1, 1))],
    "depthwise_conv2d_s8": lambda: [int8_layer("DepthwiseConv2D", (1, 6, 5, 16), (1, 3, 3, 16), seed=3,
                                               pads=(1, 1, 1, 1)),
                                    int8_layer("DepthwiseConv2D", (1, 5, 4, 3), (1, 3, 3, 6), seed=4,
                                               depth_multiplier=2, pads=(1, 1, 1, 1)),
                                    # NEON 3x3: columns run down (tall image), 8 channels along the rows
                                    int8_layer("DepthwiseConv2D", (2, 9, 3, 24), (1, 3, 3, 24), seed=9200,
                                               pads=(1, 1, 1, 1)),
                                    int8_layer("DepthwiseConv2D", (1, 7, 8, 17), (1, 3, 3, 17), seed=9201,
                                               strides=(2, 2), pads=(0, 0, 1, 1)),
                                    # a 1-D window down one column (streaming): Helium's grouped weights
                                    int8_layer("DepthwiseConv2D", (1, 11, 1, 16), (1, 5, 1, 16), seed=9501,
                                               in_zp=-128)],
    "conv2d_add_s8": lambda: [int8_conv_add((1, 7, 7, 3), (8, 3, 3, 3), seed=12, pads=(1, 1, 1, 1)),
                              int8_conv_add((1, 5, 5, 16), (7, 1, 1, 16), seed=13, conv_first=False,
                                            add_activation="none")],
    "fully_connected_s8": lambda: [int8_layer("FullyConnected", (3, 33), (7, 33), seed=5, activation="relu"),
                                   int8_layer("FullyConnected", (1, 70), (21, 70), seed=9701)],
    "conv_transpose2d_s8": lambda: [int8_layer("ConvTranspose2D", (1, 4, 5, 5), (7, 3, 3, 5), seed=14, strides=(2, 2),
                                               pads=(0, 0, 1, 1)),
                                    # a phase without taps (stride 3 > kernel 2), output past the input
                                    int8_layer("ConvTranspose2D", (2, 3, 4, 20), (6, 2, 3, 20), seed=43,
                                               strides=(3, 2), pads=(1, 0, -2, 1), in_zp=-128)],
    "add_bcast_s8": lambda: [int8_add((1, 3, 5, 6), (1, 1, 1, 6), "relu", 6)],
    "average_pool2d_s8": lambda: [int8_average_pool((1, 7, 6, 8), (3, 3), (2, 2), (1, 1, 1, 1), 7)],
    "max_pool2d_s8": lambda: [int8_max_pool((1, 9, 9, 20), (3, 3), (2, 2), (0, 0, 1, 1), 5, activation="relu"),
                              # 3-wide windows at column stride 1 (Helium slides them), 16 + 4 channels
                              int8_max_pool((1, 7, 9, 20), (3, 3), (1, 1), (1, 1, 1, 1), 71),
                              int8_max_pool((1, 6, 8, 16), (3, 3), (2, 1), (0, 1, 1, 1), 73, activation="relu6"),
                              # 2x2 windows: a clipped last row and column, then stride 1 over two images
                              int8_max_pool((1, 9, 7, 48), (2, 2), (2, 2), (0, 0, 1, 1), 72, activation="relu"),
                              int8_max_pool((2, 5, 5, 8), (2, 2), (1, 1), (0, 0, 0, 0), 74),
                              # DSP: 17 channels (a word overlapping the one before), 1 and 3 (a byte at a
                              # time), 40; windows sliding past two padded columns, batch 2, clamp or none
                              int8_max_pool((2, 6, 7, 17), (3, 3), (1, 1), (1, 1, 1, 1), 81),
                              int8_max_pool((1, 5, 6, 3), (3, 3), (2, 1), (1, 2, 1, 0), 82, activation="relu"),
                              int8_max_pool((1, 6, 5, 1), (3, 3), (1, 1), (0, 0, 0, 0), 83),
                              int8_max_pool((1, 8, 9, 40), (2, 2), (2, 2), (0, 0, 0, 1), 84),
                              int8_max_pool((2, 5, 7, 3), (2, 2), (2, 2), (0, 0, 1, 1), 85, activation="relu6"),
                              int8_max_pool((1, 5, 5, 17), (2, 2), (1, 1), (0, 0, 0, 0), 86, activation="relu"),
                              int8_max_pool((1, 7, 7, 4), (3, 3), (2, 2), (0, 0, 1, 1), 87)],
    "concat": lambda: [int8_concat([(1, 4, 5, 8), (1, 4, 5, 13)], 3, 6),
                       # rows of one vector, one and a tail, a tail, two, two and a tail; then axis 0
                       int8_concat([(1, 3, 4, 16), (1, 3, 4, 24), (1, 3, 4, 8), (1, 3, 4, 32), (1, 3, 4, 35)], 3, 75),
                       int8_concat([(1, 3, 4, 5), (2, 3, 4, 5)], 0, 76)],
    "resize_bilinear_s8": lambda: [_resize_bilinear((1, 4, 5, 7), (7, 9))],
    "index_map": lambda: [_gather((1, 3, 4, 21), 2, [3, 0, 0, 2, 1])],
    "conv2d_f32": lambda: [float_layer("Conv2D", (1, 7, 7, 3), (8, 3, 3, 3), seed=8, pads=(1, 1, 1, 1)),
                           float_layer("Conv2D", (1, 5, 5, 8), (20, 1, 1, 8), seed=9),
                           # NEON: Winograd F(2x2, 3x3) (odd output sizes, batch 2, channel tails, SAME / VALID)
                           float_layer("Conv2D", (2, 7, 7, 33), (17, 3, 3, 33), seed=9410, pads=(1, 1, 1, 1),
                                       activation="relu"),
                           float_layer("Conv2D", (1, 7, 9, 35), (23, 3, 3, 35), seed=9411)],
    "depthwise_conv2d_f32": lambda: [float_layer("DepthwiseConv2D", (1, 6, 5, 24), (1, 3, 3, 24), seed=10,
                                                 pads=(1, 1, 1, 1))],
    "fully_connected_f32": lambda: [float_layer("FullyConnected", (6, 10), (29, 10), seed=11)],
    "add_f32": lambda: [_binary("Add", (1, 3, 5, 6), (1, 1, 1, 6), "relu")],
    "sub_f32": lambda: [_binary("Sub", (2, 3, 1, 4), (1, 1, 5, 1), "none")],
    "mul_f32": lambda: [_binary("Mul", (1, 2, 3, 7), (1, 1, 1, 1), "relu6")],
    "max_pool2d_f32": lambda: [_pool("MaxPool2D", (2, 7, 9, 4), (3, 3), (1, 1), (1, 1, 1, 1))],
    "average_pool2d_f32": lambda: [_pool("AveragePool2D", (1, 9, 6, 5), (3, 2), (2, 3), (2, 1, 0, 1))],
    "softmax_f32": lambda: [_softmax()],
    "hybrid_conv2d_f32": lambda: [_hybrid()],
    "matmul_s8": lambda: [matmul_graph((2, 5, 9), (2, 9, 6), False, -3, 5, seed=41),
                          matmul_graph((3, 7), (7, 5), True, 9, -2, seed=42)],
    "svdf_s8": lambda: [svdf_graph(2, 13, 4, 2, 7, True, seed=43)],
    "matmul_f32": lambda: [_matmul_f32((2, 6, 11), (11, 13))],
    "conv_transpose2d_f32": lambda: [float_layer("ConvTranspose2D", (1, 4, 5, 6), (7, 3, 3, 6), seed=44,
                                                 strides=(2, 2), pads=(0, 0, 1, 1), activation="relu"),
                                     # a phase without taps, an output channel block of 16 and one of 4
                                     float_layer("ConvTranspose2D", (2, 3, 4, 5), (18, 2, 3, 5), seed=45,
                                                 strides=(3, 2), pads=(1, 0, -2, 1)),
                                     float_layer("ConvTranspose2D", (1, 5, 6, 3), (5, 3, 3, 3), seed=46,
                                                 pads=(1, 1, 1, 1))],
    "lstm_s8": lambda: [int8_lstm(3, 2, 5, 7, seed=61)],
}
# Float kernels that round otherwise than the reference: fused multiply-adds, another summation order.
ROUNDED = {"conv2d_f32", "depthwise_conv2d_f32", "fully_connected_f32", "average_pool2d_f32", "softmax_f32"}
ROUNDED |= {"matmul_f32"}  # NEON: fused multiply-adds
ROUNDED |= {"conv_transpose2d_f32"}

# Variants whose kernels compute another runtime's arithmetic, not the reference kernels':
# each is run against that runtime by its own tests.
OTHER_ARITHMETIC = {"onnxruntime": "tests/quant/test_onnxruntime_numerics.py",
                    "onnxruntime_dsp": "tests/cortex_m/test_onnxruntime_dsp.py"}
VARIANTS = sorted({variant for _, variant in registered() if variant != REFERENCE} - set(OTHER_ARITHMETIC))


def variant_kernels(variant: str) -> list[str]:
    return sorted(kernel for kernel, v in registered() if v == variant)


def target_for(variant: str) -> Target:
    """A target that tries `variant` first."""
    for name in available_targets():
        target = load_target(name)
        if target.variants[:1] == (variant,):
            return target
    raise AssertionError(f"no target runs variant {variant} first")


def _runner(target: Target):
    """The emulator run for the target's architecture, or the reason it cannot run here."""
    if target.runner == "qemu-user":
        return qemu_user.run_generated, qemu_user.missing_tools(target)
    from cortex_m.conftest import missing_tools  # tests/cortex_m, a namespace package beside this folder

    return qemu.run_generated, missing_tools()


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_kernels_equal_their_reference_kernels(variant):
    target = target_for(variant)
    run, missing = _runner(target)
    if missing:
        pytest.skip(missing)
    kernels = variant_kernels(variant)
    layers = [(kernel, g) for kernel in kernels for g in PROBES[kernel]()]
    g, _, outputs = merge([graph for _, graph in layers])
    fast = build_graph(g, "t", target=target)
    slow = build_graph(g, "t", target=with_kernels(target, ()))
    chosen = {(call.kernel, call.variant) for call in fast.lowered.calls}
    assert {(kernel, variant) for kernel in kernels} <= chosen, "select() did not choose the variant's kernel"
    assert all(call.variant == REFERENCE for call in slow.lowered.calls)
    feeds = random_samples(fast.manifest["inputs"], 2, seed=7)
    for got, want in zip(run(fast.files, "t", feeds, target), run(slow.files, "t", feeds, target)):
        for (kernel, _), out in zip(layers, outputs):
            if kernel in ROUNDED:
                report = compare_output(out, got[out], want[out])
                assert report.ok, (kernel, report)
            else:
                np.testing.assert_array_equal(got[out], want[out], err_msg=f"{variant}/{kernel}")
