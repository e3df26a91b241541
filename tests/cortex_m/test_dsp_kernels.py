"""The fast int8 kernels (templates/kernels/cortex_m_dsp, .../mve) equal the numpy reference,
which is bit-exact with TFLite Micro, on random layers run in QEMU: every kernel path
(pointwise and general convolution, 3x3 and other depthwise windows, depth multipliers,
channel counts that are not multiples of 4, padding on every side, strides, dilations, odd
channel and pixel counts, batches, fused activations, both requantization paths) in one
firmware per target. The weights reach the kernels repacked (codegen/kernels/repack.py)."""

from __future__ import annotations

import pytest

from codegen.ir import Graph, GraphBuilder, Quant
from codegen.kernels.select import variant_for_name as kernel_variant
from codegen.targets import load_target, with_opt_level
from codegen.verify import qemu
from codegen.verify.samples import random_samples
from cortex_m_testing import build
from helpers import assert_bit_exact, build_graph
# tests/ops, a namespace package beside this folder
from ops.linear_testing import int8_add, int8_average_pool, int8_concat, int8_layer, int8_max_pool, merge

pytestmark = pytest.mark.usefixtures("cortex_m")


# (input NHWC, weights OHWI, attributes, layer options)
CONV = [
    ((1, 5, 5, 8), (6, 1, 1, 8), {}, {}),  # pointwise, odd pixel count
    ((1, 4, 3, 12), (7, 1, 1, 12), {}, {"in_zp": -128}),  # odd output channels
    ((1, 6, 6, 5), (4, 1, 1, 5), {"strides": (2, 2)}, {}),  # in_c not a multiple of 4, strided 1x1
    ((1, 7, 7, 3), (8, 3, 3, 3), {"pads": (1, 1, 1, 1)}, {}),  # RGB stem, K = 27
    ((1, 9, 9, 3), (8, 3, 3, 3), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {"in_zp": 127}),  # SAME, stride 2
    ((2, 6, 5, 4), (5, 3, 3, 4), {"pads": (1, 1, 1, 1), "activation": "relu6"}, {"out_zp": -100}),
    ((1, 9, 8, 2), (4, 3, 2, 2), {"dilations": (2, 3), "pads": (2, 3, 2, 3)}, {}),
    ((1, 12, 4, 1), (6, 10, 4, 1), {"strides": (2, 2), "pads": (4, 1, 5, 1)}, {"in_zp": 83}),  # KWS stem
    ((1, 6, 5, 3), (3, 3, 3, 3), {"strides": (1, 2), "pads": (2, 0, 1, 3), "activation": "relu"}, {}),
    ((1, 4, 4, 16), (9, 3, 3, 16), {"pads": (1, 1, 1, 1)}, {"per_channel": False, "bias": False}),
    ((1, 3, 3, 20), (6, 1, 1, 20), {}, {"gain": 60.0}),  # right shifts of 1 to 3: general requantization
    ((1, 3, 4, 8), (4, 2, 2, 8), {}, {"gain": 3000.0, "out_zp": -60}),  # left shifts
    ((2, 3, 3, 32), (6, 1, 1, 32), {}, {"in_zp": -128}),  # pointwise on 16k channels (read in place): odd pixels
    ((1, 1, 2, 5), (3, 1, 1, 5), {}, {}),  # pointwise, the whole input shorter than a vector
    # 16 pixels or more: the DSP kernel's int16 weights (conv2d_s8.WIDE_MIN_PIXELS)
    ((1, 9, 8, 24), (6, 1, 1, 24), {}, {}),  # pointwise, 6 groups: a whole loop turn and a remainder
    ((1, 8, 9, 3), (7, 3, 3, 3), {"pads": (1, 1, 1, 1), "activation": "relu"}, {"in_zp": -5}),  # odd O, K = 27
    ((2, 6, 6, 20), (5, 1, 1, 20), {}, {"gain": 60.0}),  # batches, general requantization
    # interleaved windows (in_c a multiple of 4) of a call GCC inlines with its constants when
    # built alone: it once stopped the build with -Waggressive-loop-optimizations
    ((1, 8, 8, 8), (8, 3, 3, 8), {"pads": (1, 1, 1, 1)}, {}),
    ((1, 9, 9, 12), (12, 3, 3, 12), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {}),
]
DEPTHWISE = [
    ((1, 6, 5, 8), (1, 3, 3, 8), {"pads": (1, 1, 1, 1)}, {}),  # 3x3 fast path, padded
    ((1, 7, 7, 16), (1, 3, 3, 16), {"strides": (2, 2)}, {"in_zp": -128}),  # unpadded, strided
    ((1, 8, 8, 4), (1, 3, 3, 4), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {}),  # SAME: bottom/right
    ((1, 9, 1, 12), (1, 5, 1, 12), {}, {}),  # 1-D (streaming wake word), general window
    ((2, 6, 6, 8), (1, 3, 2, 8), {"dilations": (2, 1), "pads": (2, 1, 2, 0), "activation": "relu6"}, {}),
    ((1, 5, 5, 6), (1, 3, 3, 6), {"pads": (1, 1, 1, 1)}, {}),  # 6 channels: generic path
    ((1, 5, 4, 3), (1, 3, 3, 6), {"depth_multiplier": 2, "pads": (1, 1, 1, 1)}, {}),  # multiplier 2
    ((1, 4, 4, 8), (1, 3, 3, 8), {"pads": (1, 1, 1, 1)}, {"gain": 100.0}),  # general requantization
    ((1, 5, 5, 4), (1, 3, 3, 4), {"pads": (1, 1, 1, 1)}, {"gain": 500.0, "in_zp": 100}),  # left shifts
    ((1, 9, 1, 16), (1, 5, 1, 16), {"pads": (2, 0, 2, 0)}, {}),  # 1-D window, eight channels at a time
    ((1, 7, 7, 8), (1, 3, 3, 8), {"dilations": (2, 2), "pads": (2, 2, 2, 2)}, {}),  # dilated 3x3
    # the ring path over two images, strides (1, 2), a clamp that bites
    ((2, 5, 7, 12), (1, 3, 3, 12), {"strides": (1, 2), "pads": (1, 1, 1, 1), "activation": "relu6"}, {"out_zp": -20}),
    # Helium's group-major 3x3 path (16k channels, padded, stride 1 or 2 across): odd and even
    # widths (a lone last pixel), SAME at stride 2, two images, a clamp that bites
    ((1, 6, 7, 16), (1, 3, 3, 16), {"pads": (1, 1, 1, 1)}, {"in_zp": -128}),
    ((1, 9, 8, 32), (1, 3, 3, 32), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {}),
    ((1, 9, 9, 8), (1, 3, 3, 8), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {"in_zp": 90}),  # eight channels
    ((2, 5, 5, 16), (1, 3, 3, 16), {"strides": (1, 2), "pads": (1, 1, 1, 1), "activation": "relu6"}, {"out_zp": 30}),
]
FULLY_CONNECTED = [
    ((1, 64), (12, 64), {}, {}),
    ((3, 10), (7, 10), {}, {"per_channel": False}),  # K and O odd, three rows
    ((2, 33), (5, 33), {"activation": "relu"}, {"in_zp": -128, "out_zp": -128}),
    ((1, 8), (9, 8), {}, {"gain": 200.0, "bias": False}),
    ((2, 48), (20, 48), {"activation": "relu6"}, {}),  # Helium: two pairs of blocks in assembly, one block after
]


def _linear_layers() -> list[Graph]:
    graphs = []
    for op, cases, seed in (("Conv2D", CONV, 0), ("DepthwiseConv2D", DEPTHWISE, 100),
                            ("FullyConnected", FULLY_CONNECTED, 200)):
        for k, (x_shape, w_shape, attrs, opts) in enumerate(cases):
            graphs.append(int8_layer(op, x_shape, w_shape, seed=seed + k, **opts, **attrs))
    return graphs


def _max_pools() -> list[Graph]:
    return [int8_max_pool((1, 9, 9, 8), (3, 3), (2, 2), (0, 0, 1, 1), 1),  # SAME: windows clipped bottom/right
            int8_max_pool((1, 6, 5, 6), (2, 2), (2, 2), (0, 0, 0, 1), 2),  # channels not a multiple of 4
            int8_max_pool((1, 7, 7, 20), (3, 3), (1, 1), (1, 1, 1, 1), 3, activation="relu"),  # 16 + 4 lanes
            int8_max_pool((2, 4, 4, 4), (2, 2), (2, 2), (0, 0, 0, 0), 4)]


def _concats() -> list[Graph]:
    return [int8_concat([(1, 4, 5, 8), (1, 4, 5, 13), (1, 4, 5, 3)], 3, 1),  # channels: 8, 13, 3 bytes a row
            int8_concat([(2, 3, 6), (2, 5, 6)], 1, 2),  # rows of 18 and 30 bytes
            int8_concat([(3, 7), (2, 7)], 0, 3)]  # the first axis: one run per input


def _other_layers() -> list[Graph]:
    return [int8_add((1, 4, 4, 8), (1, 4, 4, 8), "none", 1), int8_add((1, 3, 5, 6), (1, 1, 1, 6), "relu", 2),
            int8_add((2, 3, 1, 4), (1, 1, 5, 1), "relu6", 3), int8_add((1, 2, 3, 5), (1, 2, 3, 5), "none", 4),
            int8_average_pool((1, 25, 5, 16), (25, 5), (25, 5), (0, 0, 0, 0), 1),  # KWS: global, 125 positions
            int8_average_pool((1, 7, 6, 8), (3, 3), (2, 2), (1, 1, 1, 1), 2),  # windows clipped by the padding
            int8_average_pool((1, 5, 5, 6), (2, 2), (1, 1), (0, 0, 0, 0), 3),  # channels not a multiple of 4
            int8_average_pool((1, 17, 16, 4), (17, 16), (1, 1), (0, 0, 0, 0), 4),  # 272 positions: scalar sums
            *_max_pools(), *_concats()]


def check_target(graphs: list[Graph], target: str, variant: str, kernels: set[str], samples: int = 3,
                 opt_level: str | None = None, optimize: str = "speed"):
    g, _, _ = merge(graphs)
    t = load_target(target) if opt_level is None else with_opt_level(load_target(target), opt_level)
    res = build(g, t) if optimize == "speed" else build_graph(g, "t", target=t, optimize=optimize)
    for kernel in kernels:
        assert kernel in res.manifest["kernels"] and kernel_variant(kernel, t.variants) == variant, kernel
    feeds = random_samples(res.manifest["inputs"], samples, seed=5)
    assert_bit_exact(g, feeds, qemu.run_generated(res.files, "t", feeds, t))


LINEAR = {"conv2d_s8", "depthwise_conv2d_s8", "fully_connected_s8"}


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m33"])  # Armv7E-M and Armv8-M Mainline
def test_dsp_linear_kernels_equal_the_reference(target):
    check_target(_linear_layers(), target, "cortex_m_dsp", LINEAR)


def test_dsp_add_and_average_pool_equal_the_reference():
    check_target(_other_layers(), "cortex-m4", "cortex_m_dsp", {"add_bcast_s8", "average_pool2d_s8", "max_pool2d_s8",
                                                                      "concat"})


@pytest.mark.parametrize("target,variant", [("cortex-m4", "cortex_m_dsp"), ("cortex-m55", "mve")])
def test_fast_kernels_built_for_size_equal_the_reference(target, variant):
    """--optimize size: bytes for weights, the single clamping copy of the ring loop, windows
    copied one tap at a time, no direct pointwise path (Helium)."""
    check_target(_linear_layers(), target, variant, LINEAR, optimize="size")


@pytest.mark.parametrize("target,optimize", [("cortex-m4", "speed"), ("cortex-m4", "size"), ("cortex-m55", "speed"),
                                             ("cortex-m55", "size")])
def test_a_layer_alone_renders_only_its_paths(target, optimize, tmp_path):
    """Each layer built alone renders the paths of its own call (codegen/kernels/cortex_m_dsp/
    paths.py) and still compiles with the strict flags: every path subset the cases reach."""
    import subprocess

    from codegen.verify.toolchain import STRICT_FLAGS

    flags = load_target(target).cflags
    for k, g in enumerate(_linear_layers()):
        res = build_graph(g, "t", target=target, optimize=optimize)
        for fname, text in res.files.items():
            (tmp_path / fname).write_text(text)
        proc = subprocess.run(["arm-none-eabi-gcc", *flags, *STRICT_FLAGS, "-c", "t.c", "-o", "t.o"],
                              cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, f"case {k}: {proc.stderr[-2000:]}"
    ring = int8_layer("DepthwiseConv2D", (1, 6, 5, 8), (1, 3, 3, 8), seed=1, pads=(1, 1, 1, 1))
    text = build_graph(ring, "t", target=target, optimize=optimize).files["t.c"]
    assert "kiln_depthwise_conv2d_s8_generic(" not in text
    if target == "cortex-m4":
        assert "kiln_depthwise_conv2d_s8_ring(" in text and "kiln_depthwise_conv2d_s8_pixel(" not in text
    else:
        # the group-major 3x3 path, but with --optimize size (its windows in assembly)
        fast, other = "kiln_depthwise_conv2d_s8_g8(", "kiln_depthwise_conv2d_s8_taps8_3x3("
        if optimize == "size":
            fast, other = other, fast
        assert fast in text and other not in text


def test_mve_kernels_equal_the_reference():
    check_target(_linear_layers() + _other_layers(), "cortex-m55", "mve", LINEAR | {"add_bcast_s8", "max_pool2d_s8"})


@pytest.mark.parametrize("target,variant", [("cortex-m4", "cortex_m_dsp"), ("cortex-m55", "mve")])
def test_debug_builds_at_o0_equal_the_reference(target, variant):
    """At -O0 (r7 kept as the frame pointer) the assembly loops give way to the same
    instructions as intrinsics: still bit-exact."""
    check_target(_linear_layers() + _other_layers(), target, variant, LINEAR, opt_level="O0")


def test_dsp_lowering_repacks_the_weights():
    """The DSP build carries packed int32 words and requantization records, not the int8
    weights and the reference's multiplier/shift arrays."""
    g = int8_layer("Conv2D", (1, 4, 4, 8), (6, 3, 3, 8), seed=1, pads=(1, 1, 1, 1))
    ref, dsp = build(g, "host"), build(g, "cortex-m4")
    ref_consts = {c.name: c for c in ref.lowered.consts}
    dsp_consts = {c.name: c for c in dsp.lowered.consts}
    assert any(n.startswith("multiplier_") for n in ref_consts)
    assert not any(n.startswith("multiplier_") or n.startswith("c_w") for n in dsp_consts)
    w = next(c for n, c in dsp_consts.items() if n.startswith("w_"))
    # 16 output pixels: int16 weights, two bytes each (conv2d_s8.WIDE_MIN_PIXELS)
    assert w.dtype == "int32" and w.data.size == 6 * 72 // 2
    (call,) = dsp.lowered.calls
    assert call.params["k4"] == 72 and call.params["rq_r2"] is True and call.params["wide"] == 1
    # --optimize size keeps them in bytes
    small = build_graph(g, "t", target="cortex-m4", optimize="size")
    w = next(c for c in small.lowered.consts if c.name.startswith("w_"))
    assert w.data.size == 6 * 72 // 4 and small.lowered.calls[0].params["wide"] == 0


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_fast_kernels_compile_at_every_optimization_level(target, tmp_path):
    """The inline assembly needs at most 14 registers at once; GCC must find them at -O1 and
    -Os (which keep more values live) as well as at the targets' -O2; -O0 (a debug build,
    r7 the frame pointer) compiles the intrinsics versions instead."""
    import subprocess

    from codegen.verify.toolchain import STRICT_FLAGS

    g, _, _ = merge(_linear_layers() + _other_layers())
    res = build(g, target)
    for fname, text in res.files.items():
        (tmp_path / fname).write_text(text)
    flags = [f for f in load_target(target).cflags if not f.startswith("-O")]
    for level in ("-O0", "-O1", "-Os", "-O3"):
        proc = subprocess.run(["arm-none-eabi-gcc", *flags, level, *STRICT_FLAGS, "-c", "t.c", "-o", "t.o"],
                              cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, f"{level}: {proc.stderr[-2000:]}"
