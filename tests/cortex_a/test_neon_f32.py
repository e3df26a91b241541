"""The NEON float32 kernels (templates/kernels/neon/*_f32) equal the reference on random
layers run under qemu-aarch64: pointwise convolution as a GEMM (strided too), general
convolution (padding on every side, strides, dilations, RGB and single-channel stems: runs
of kernel rows, gathered border windows, taps of dilated rows), depthwise convolution (the
whole-image 3x3 path with every border at strides 1 and 2, the 16- and 4-channel vector
paths, the scalar tail, depth multipliers), fully connected (1 to 6 rows, every
channel-block width, the one-row assembly tiles), max and average
pooling, broadcasting Add/Sub/Mul and softmax, all in one executable per target.

FMA rounds once where the reference rounds twice, so the linear kernels and softmax agree to
codegen/verify/compare.py's float tolerance; pooling and elementwise kernels do the same IEEE
operations in the same order and must agree exactly. Also: the weight layouts of
codegen/kernels/repack_f32.py (NEON panels; the reference kernels' output-channel-last weights
and their fallback for computed weights), the strict flags at every optimization level, and
the NEON convolution writing its output over its input (partial overlap by 4-pixel tiles).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from codegen.ir import Graph, GraphBuilder, run_graph
from codegen.kernels.neon import winograd_f32
from codegen.kernels.repack_f32 import block_widths, gemm_panels
from codegen.kernels.select import variant_for_name as kernel_variant
from codegen.targets import load_target, with_kernels
from codegen.verify import qemu_user
from codegen.verify.compare import compare_output
from codegen.verify.samples import random_samples
from cortex_a_testing import build
from ops.linear_testing import float_layer, merge  # tests/ops, a namespace package beside this folder

# (input NHWC, weights OHWI, attributes)
CONV = [
    ((1, 5, 5, 8), (20, 1, 1, 8), {}),  # pointwise: tiles of 4 pixels, blocks of 16 + 4 channels
    ((1, 6, 6, 5), (7, 1, 1, 5), {"strides": (2, 2)}),  # strided pointwise, K and O not multiples of 4
    ((1, 3, 3, 4), (6, 1, 1, 4), {"pads": (0, 0, 1, 1)}),  # 1x1 reading bottom/right padding: general
    ((1, 7, 7, 3), (8, 3, 3, 3), {"pads": (1, 1, 1, 1), "activation": "relu"}),  # RGB stem, K = 27
    ((2, 6, 5, 4), (37, 3, 3, 4), {"pads": (1, 1, 1, 1), "activation": "relu6"}),  # 16 + 16 + 8 channels
    ((1, 9, 8, 2), (12, 3, 2, 2), {"dilations": (2, 3), "pads": (2, 3, 2, 3)}),
    ((1, 12, 4, 1), (6, 10, 4, 1), {"strides": (2, 2), "pads": (4, 1, 5, 1)}),  # KWS stem, C = 1
    ((1, 9, 12, 4), (8, 3, 3, 4), {"dilations": (2, 1), "pads": (1, 1, 2, 1)}),  # rows read in place, dilated
    ((1, 11, 14, 5), (16, 3, 3, 5), {"strides": (2, 2)}),  # 4x16 tiles in place at stride 2, K = 45
    # Winograd F(2x2, 3x3) by its estimate: odd output sizes, batches, channel tails, a last
    # group of fewer than 4 tiles (2 * 16 tiles; 3 * 4: 12)
    ((2, 7, 7, 33), (17, 3, 3, 33), {"pads": (1, 1, 1, 1), "activation": "relu"}),
    ((1, 7, 9, 35), (23, 3, 3, 35), {"activation": "relu6"}),  # VALID: 5x7
]
DEPTHWISE = [
    ((1, 6, 5, 24), (1, 3, 3, 24), {"pads": (1, 1, 1, 1)}),  # 16 + 4 + 4 channels
    ((1, 7, 7, 16), (1, 3, 3, 16), {"strides": (2, 2), "activation": "relu6"}),
    ((1, 8, 8, 6), (1, 3, 3, 6), {"strides": (2, 2), "pads": (0, 0, 1, 1)}),  # 4 + 2 scalar channels
    ((2, 6, 6, 8), (1, 3, 2, 8), {"dilations": (2, 1), "pads": (2, 1, 2, 0)}),
    ((1, 5, 4, 3), (1, 3, 3, 6), {"depth_multiplier": 2, "pads": (1, 1, 1, 1)}),  # multiplier 2: scalar
    ((1, 9, 1, 12), (1, 5, 1, 12), {}),  # 1-D window
    ((1, 7, 9, 12), (1, 3, 3, 12), {}),  # 3x3 rows inside: 8 + 4 channels
    ((1, 9, 8, 8), (1, 3, 3, 8), {"strides": (2, 2), "pads": (0, 0, 1, 1)}),  # 3x3 rows, SAME padding
    ((2, 7, 11, 12), (1, 3, 3, 12), {"strides": (2, 2), "pads": (1, 1, 1, 1), "activation": "relu"}),  # whole image
    ((1, 2, 2, 4), (1, 3, 3, 4), {"pads": (1, 1, 1, 1)}),  # every window misses a row and a column
    ((1, 3, 14, 8), (1, 3, 3, 8), {"pads": (1, 1, 0, 1), "activation": "relu6"}),  # groups of 4, singles, right
]
FULLY_CONNECTED = [
    ((1, 64), (12, 64), {}),
    ((6, 10), (29, 10), {"activation": "relu"}),  # one tile of 4 rows and two single rows
    ((4, 33), (16, 33), {}),
    ((1, 3), (1, 3), {"activation": "relu_n1_to_1"}),
    ((1, 37), (24, 37), {"activation": "relu6"}),  # one row: assembly tiles of 16 and 8 channels
    ((2, 9), (40, 9), {}),  # two single rows, 16 + 16 + 8 channels
]
POOLS = [  # (op, input, kernel, strides, pads, activation)
    ("MaxPool2D", (1, 8, 8, 6), (2, 2), (2, 2), (0, 0, 0, 0), "none"),
    ("MaxPool2D", (2, 7, 9, 4), (3, 3), (1, 1), (1, 1, 1, 1), "relu"),
    ("AveragePool2D", (1, 9, 6, 5), (3, 2), (2, 3), (2, 1, 0, 1), "none"),
    ("AveragePool2D", (1, 5, 5, 8), (5, 5), (1, 1), (0, 0, 0, 0), "relu6"),  # global
]
ELEMENTWISE = [  # (op, a shape, b shape, activation)
    ("Add", (1, 4, 4, 8), (1, 4, 4, 8), "none"),
    ("Sub", (1, 3, 4, 9), (1, 3, 4, 9), "relu6"),  # contiguous, clamped above, 16 at a time and a tail
    ("Add", (1, 3, 5, 6), (1, 1, 1, 6), "relu"),  # per-channel vector
    ("Sub", (2, 3, 1, 4), (1, 1, 5, 1), "none"),  # both broadcast
    ("Mul", (1, 2, 3, 7), (1, 1, 1, 1), "relu6"),  # scalar
    ("Mul", (1, 6, 1, 1), (1, 6, 9, 1), "none"),  # a broadcast along the innermost loop
]
SOFTMAX = [((1, 10), -1, 1.0), ((3, 12), -1, 0.5), ((2, 3), -1, 1.0), ((1, 4, 5), 1, 1.0)]


def _pool(op, shape, kernel, strides, pads, activation) -> Graph:
    b = GraphBuilder(op.lower())
    y = b.node(op, [b.input("x", "float32", shape)], kernel=kernel, strides=strides, pads=pads,
               activation=activation)
    return b.output(y).build()


def _binary(op, a_shape, b_shape, activation) -> Graph:
    b = GraphBuilder(op.lower())
    y = b.node(op, [b.input("a", "float32", a_shape), b.input("b", "float32", b_shape)], activation=activation)
    return b.output(y).build()


def _softmax(shape, axis, beta) -> Graph:
    b = GraphBuilder("softmax")
    return b.output(b.node("Softmax", [b.input("x", "float32", shape)], axis=axis, beta=beta)).build()


def _linear() -> list[Graph]:
    graphs = []
    for op, cases, seed in (("Conv2D", CONV, 0), ("DepthwiseConv2D", DEPTHWISE, 100),
                            ("FullyConnected", FULLY_CONNECTED, 200)):
        graphs += [float_layer(op, x, w, seed=seed + k, bias=k % 3 != 1, **attrs)
                   for k, (x, w, attrs) in enumerate(cases)]
    return graphs


def _exact() -> list[Graph]:
    """Layers whose kernels round as the reference does (average pooling sums in another
    order than numpy's mean, so it is checked with the tolerance)."""
    return ([_pool(*case) for case in POOLS if case[0] == "MaxPool2D"]
            + [_binary(*case) for case in ELEMENTWISE])


NEON_KERNELS = {"conv2d_f32", "depthwise_conv2d_f32", "fully_connected_f32", "max_pool2d_f32",
                "average_pool2d_f32", "add_f32", "sub_f32", "mul_f32", "softmax_f32"}


@pytest.fixture(scope="module")
def aarch64():
    reason = qemu_user.missing_tools(load_target("cortex-a53"))
    if reason:
        pytest.skip(reason)


def _run(graphs: list[Graph], target: str):
    """The merged graph, its NEON outputs under qemu-aarch64 and the numpy reference's."""
    g, _, _ = merge(graphs)
    t = load_target(target)
    res = build(g, t)
    for kernel in set(res.manifest["kernels"]) & NEON_KERNELS:
        assert kernel_variant(kernel, t.variants) == "neon", kernel
    feeds = random_samples(res.manifest["inputs"], 2, seed=7)
    got = qemu_user.run_generated(res.files, "t", feeds, t)
    return g, res, [(out, run_graph(g, feed)) for feed, out in zip(feeds, got)]


@pytest.mark.parametrize("target", ["cortex-a53", "cortex-a55"])
def test_neon_float_kernels_match_the_reference(aarch64, target):
    exact = _exact()
    rounded = (_linear() + [_pool(*case) for case in POOLS if case[0] == "AveragePool2D"]
               + [_softmax(*case) for case in SOFTMAX])
    g, res, runs = _run(exact + rounded, target)
    assert NEON_KERNELS <= set(res.manifest["kernels"])
    for got, want in runs:
        for k, name in enumerate(g.outputs):
            if k < len(exact):
                np.testing.assert_array_equal(got[name], want[name], err_msg=name)
            report = compare_output(name, got[name], want[name])
            assert report.ok, (name, report)


# Winograd forced on every 3x3 stride-1 layer (its estimate keeps few channels direct): channel
# counts 3, 5, 17 (each transform's tail), SAME and VALID, batch 2, odd output sizes, clamps
WINOGRAD_FORCED = [((2, 5, 7, 3), (5, 3, 3, 3), {"pads": (1, 1, 1, 1), "activation": "relu"}),
                   ((1, 9, 6, 5), (17, 3, 3, 5), {}),  # VALID: 7x4
                   ((2, 6, 5, 17), (3, 3, 3, 17), {"pads": (1, 1, 1, 1), "activation": "relu6"}),
                   ((1, 4, 4, 8), (16, 3, 3, 8), {"pads": (0, 0, 1, 1)}),  # padded after only
                   ((1, 3, 3, 4), (8, 3, 3, 4), {})]  # one output pixel: one tile, three of zeros


def test_neon_winograd_matches_the_reference(aarch64, monkeypatch):
    monkeypatch.setattr(winograd_f32, "winograd_wins", winograd_f32.fits)
    graphs = [float_layer("Conv2D", x, w, seed=9400 + k, bias=k != 1, **attrs)
              for k, (x, w, attrs) in enumerate(WINOGRAD_FORCED)]
    g, res, runs = _run(graphs, "cortex-a72")
    assert sum(c.params.get("winograd", False) for c in res.lowered.calls) == len(WINOGRAD_FORCED)
    for got, want in runs:
        for name in g.outputs:
            report = compare_output(name, got[name], want[name])
            assert report.ok, (name, report)


def test_winograd_chosen_by_its_estimate():
    """ResNet-8's 3x3 layers of 16 to 64 channels take Winograd, its RGB stem and strided or
    dilated layers the direct path."""
    def shape(hw, in_c, out_c, **kw):
        return {"batches": 1, "out_h": hw, "out_w": hw, "in_c": in_c, "out_c": out_c, "k_h": 3, "k_w": 3,
                "stride_h": 1, "stride_w": 1, "dilation_h": 1, "dilation_w": 1, **kw}
    assert all(winograd_f32.winograd_wins(shape(*s)) for s in [(32, 16, 16), (16, 32, 32), (8, 64, 64)])
    assert not winograd_f32.winograd_wins(shape(32, 3, 16))
    assert not winograd_f32.winograd_wins(shape(16, 32, 32, stride_h=2, stride_w=2))
    assert not winograd_f32.winograd_wins(shape(16, 32, 32, dilation_h=2))


@pytest.mark.parametrize("optimize, winograd", [("speed", True), ("size", False), ("ram", False)])
def test_winograd_for_speed_only(optimize, winograd):
    """Its weights take 16/9 the flash and its scratch more RAM: --optimize size and ram keep
    the direct path."""
    g = float_layer("Conv2D", (1, 8, 8, 40), (20, 3, 3, 40), seed=9402, pads=(1, 1, 1, 1))
    (call,) = [c for c in build(g, "cortex-a72", optimize=optimize).lowered.calls if c.kernel == "conv2d_f32"]
    assert call.params["winograd"] == winograd


def test_winograd_panels_compute_the_convolution():
    """Per position xi, U[xi] = G g G^T (the bias in xi = (1, 1)): V = B^T d B of a 4x4 patch
    times U, then A^T M A, is the 3x3 convolution's 2x2 outputs plus the bias."""
    rng = np.random.default_rng(9401)
    w = rng.standard_normal((6, 3, 3, 5)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    patch = rng.standard_normal((4, 4, 5))
    panels = winograd_f32.winograd_panels(w, bias).reshape(16, 5 + 1, 8)  # per xi: bias, then [k][o]; o padded to 8
    v = np.einsum("ai,ijc,bj->abc", winograd_f32.B_T, patch, winograd_f32.B_T).reshape(16, 5)
    m = np.stack([panels[xi, 0, :6] + v[xi] @ panels[xi, 1:, :6] for xi in range(16)]).reshape(4, 4, 6)
    y = np.einsum("ia,abo,jb->ijo", winograd_f32.A_T, m, winograd_f32.A_T)
    want = np.array([[np.einsum("klc,oklc->o", patch[i:i + 3, j:j + 3], w) + bias
                      for j in range(2)] for i in range(2)])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_winograd_template_transforms_are_the_python_ones():
    """templates/kernels/neon/_winograd_f32.c.j2 writes B^T and A^T as lists of (index, sign)
    terms: the same matrices as codegen/kernels/neon/winograd_f32.py's."""
    from codegen.emit.render import _ENV

    module = _ENV.get_template("kernels/neon/_winograd_f32.c.j2").module

    def dense(rows, width):
        out = np.zeros((len(rows), width))
        for r, terms in enumerate(rows):
            for index, sign in terms:
                out[r, index] = sign
        return out

    np.testing.assert_array_equal(dense(module.B_T, 4), winograd_f32.B_T)
    np.testing.assert_array_equal(dense(module.A_T, 4), winograd_f32.A_T)


def test_gemm_panels_layout():
    """Per block of channels (16, then the rest rounded up to 4): bias, then [K][width]."""
    rows = np.arange(20 * 3, dtype=np.float32).reshape(20, 3)
    bias = -np.arange(1, 21, dtype=np.float32)
    panels = gemm_panels(rows, bias)
    assert block_widths(20) == [16, 4] and block_widths(32) == [16, 16] and block_widths(9) == [12]
    first, second = panels[:16 * 4].reshape(4, 16), panels[16 * 4:].reshape(4, 4)
    np.testing.assert_array_equal(first[0], bias[:16])
    np.testing.assert_array_equal(first[1:], rows[:16].T)
    np.testing.assert_array_equal(second[0], bias[16:])
    np.testing.assert_array_equal(second[1:], rows[16:].T)
    narrow = gemm_panels(rows[:9], bias[:9]).reshape(4, 12)
    assert not narrow[:, 9:].any()  # padded channels are zero


def _computed_weights(op: str, x_shape, w_shape) -> Graph:
    b = GraphBuilder("computed_w")
    y = b.node(op, [b.input("x", "float32", x_shape), b.input("w", "float32", w_shape)], activation="relu")
    return b.output(y).build()


COMPUTED = [("Conv2D", (1, 5, 4, 3), (6, 3, 2, 3)), ("FullyConnected", (2, 7), (5, 7))]


@pytest.mark.parametrize("op, x_shape, w_shape", COMPUTED)
def test_reference_kernels_read_computed_weights_as_stored(op, x_shape, w_shape):
    """Constant weights reach the reference kernels with the output channel last (HWIO,
    [K][O]); weights computed at run time keep their stored layout (w_oc_stride = K)."""
    from codegen.verify.host import run_generated

    g = _computed_weights(op, x_shape, w_shape)
    res = build(g, "host")
    (call,) = [c for c in res.lowered.calls if c.kernel.endswith("_f32")]
    assert call.params["w_oc_stride"] == int(np.prod(w_shape[1:]))
    feeds = random_samples(res.manifest["inputs"], 2, seed=3)
    for feed, got in zip(feeds, run_generated(res.files, "t", feeds)):
        want = run_graph(g, feed)
        assert compare_output("y", got[g.outputs[0]], want[g.outputs[0]]).ok


def test_neon_kernels_refuse_computed_weights():
    from codegen.errors import KilnError

    g = _computed_weights(*COMPUTED[0])
    with pytest.raises(KilnError, match="needs constant weights"):
        build(g, "cortex-a53")


# The levels the other tests do not build (targets: cortex-a53 -O3, host -O2).
@pytest.mark.parametrize("target, cc, levels", [("cortex-a53", "aarch64-linux-gnu-gcc", ("-O1", "-O2", "-Os")),
                                                ("host", "gcc", ("-O1", "-Os", "-O3"))])
def test_float_kernels_compile_at_every_optimization_level(aarch64, target, cc, levels, tmp_path):
    """GCC's warnings depend on what it inlines and unrolls (-Warray-bounds and
    -Waggressive-loop-optimizations fire on constant-propagated loops): the NEON kernels and
    the reference ones they are measured against must pass the strict flags at any level."""
    import subprocess

    from codegen.verify.toolchain import STRICT_FLAGS

    g, _, _ = merge(_linear() + _exact() + [_softmax(*case) for case in SOFTMAX])
    res = build(g, target)
    for fname, text in res.files.items():
        (tmp_path / fname).write_text(text)
    flags = [f for f in load_target(target).cflags if not f.startswith("-O")]
    for level in levels:
        proc = subprocess.run([cc, *flags, level, *STRICT_FLAGS, "-c", "t.c", "-o", "t.o"], cwd=tmp_path,
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"{level}: {proc.stderr[-2000:]}"


# (input NHWC, weights OHWI, attributes): general windows, dense and strided pointwise layers
# (one with fewer output than input channels in two blocks: a tile's first block is written
# while the second still reads the tile's input pixels), single pixels after the tiles of 4,
# two batches
OVERLAP = [((1, 6, 7, 4), (8, 3, 3, 4), {"pads": (1, 1, 1, 1)}),
           ((1, 5, 5, 4), (20, 1, 1, 4), {}),
           ((1, 5, 5, 24), (20, 1, 1, 24), {}),
           ((1, 7, 7, 8), (6, 1, 1, 8), {"strides": (2, 2)}),
           ((2, 8, 7, 6), (5, 3, 2, 6), {"dilations": (2, 1), "pads": (2, 0, 1, 1)}),
           ((2, 8, 10, 36), (36, 3, 3, 36), {"pads": (1, 1, 1, 1)}),  # Winograd: groups of 4 tiles
           ((1, 7, 9, 40), (20, 3, 3, 40), {"pads": (0, 1, 2, 1)})]  # Winograd, fewer outputs per pixel


def test_neon_conv_partial_overlap_bit_exact(aarch64):
    """Every NEON conv forced to write its output over its input (at the least shift of a
    4-pixel tile, codegen/kernels/inplace.py) gives the same bits as with separate buffers."""
    from codegen.emit.render import render
    from codegen.memory import Plan, validate_plan
    from codegen.memory.planners import greedy_aliases, place_greedy

    b = GraphBuilder("overlap")
    rng = np.random.default_rng(11)
    for k, (shape, wshape, attrs) in enumerate(OVERLAP):
        y = b.node("Clip", [b.input(f"x{k}", "float32", shape)], name=f"clip{k}", min=-1.5, max=1.5)
        w = b.const(f"w{k}", rng.standard_normal(wshape).astype(np.float32))
        y = b.node("Conv2D", [y, w, b.const(f"b{k}", rng.standard_normal(wshape[0]).astype(np.float32))],
                   name=f"conv{k}", **attrs)
        b.output(b.node("Clip", [y], name=f"out{k}", min=-3.0, max=3.0))
    t = load_target("cortex-a53")
    plain = build(b.build(), t, planner="linear")
    chosen = greedy_aliases(plain.buffers, plain.aliases)
    assert sorted(a.out for a in chosen if a.out.startswith("conv")) == [f"conv{k}" for k in range(len(OVERLAP))]
    offsets = place_greedy(plain.buffers, chosen)
    arena = max(offsets[buf.name] + buf.size for buf in plain.buffers)
    plan = Plan(offsets, arena, plain.plan.lower_bound, "forced", "FEASIBLE", aliases=tuple(a.pair for a in chosen))
    validate_plan(plain.buffers, plan, plain.aliases)
    forced = {**plain.files, **render(plain.lowered, plan, name="t", model_file="t.test", model_sha256="0" * 64)}
    feeds = random_samples(plain.manifest["inputs"], 2, seed=4)
    for a, want in zip(qemu_user.run_generated(forced, "t", feeds, t), qemu_user.run_generated(plain.files, "t", feeds, t)):
        for name in want:
            np.testing.assert_array_equal(a[name], want[name], err_msg=name)


def _depthwise_into_hybrid(x_shape, dw_attrs, seed) -> Graph:
    """A 3x3 depthwise layer whose output a hybrid convolution also reads (so the NEON kernel
    must sum in the reference's exact order), both outputs graph outputs."""
    from ops.test_hybrid_conv2d import hybrid_model  # tests/ops, as above

    from codegen.frontends.tflite import load_bytes

    hybrid = load_bytes(hybrid_model(x_shape, (6, 3, 3, x_shape[3]), {"padding": "SAME"}, "channel", seed=seed))
    dw = float_layer("DepthwiseConv2D", x_shape, (1, 3, 3, x_shape[3]), seed=seed + 1, **dw_attrs)
    (link,) = hybrid.inputs
    (dw_out,) = dw.outputs
    rename = {dw_out: link, **{name: f"dw_{name}" for name in dw.values if name != dw_out}}
    g = Graph("dw_hybrid")
    for v in dw.values.values():
        if v.name != dw_out:
            g.add_value(dataclasses.replace(v, name=rename[v.name]))
    for v in hybrid.values.values():
        g.add_value(v)
    g.nodes = [dataclasses.replace(n, inputs=[rename.get(i, i) for i in n.inputs],
                                   outputs=[rename.get(o, o) for o in n.outputs]) for n in dw.nodes] + hybrid.nodes
    g.inputs = [rename[name] for name in dw.inputs]
    g.outputs = [link, *hybrid.outputs]
    return g


@pytest.mark.parametrize("x_shape, dw_attrs", [
    ((1, 6, 5, 16), {"pads": (1, 1, 1, 1), "activation": "relu"}),  # KWS-like: a narrow row, every border
    ((1, 9, 12, 8), {"strides": (2, 2), "pads": (0, 0, 1, 1)}),  # stride 2: groups of four, the right border
])
def test_neon_depthwise_read_by_a_hybrid_layer_is_the_reference_bit_for_bit(aarch64, x_shape, dw_attrs):
    g = _depthwise_into_hybrid(x_shape, dw_attrs, seed=31)
    target = load_target("cortex-a72")
    fast, slow = build(g, target), build(g, with_kernels(target, ()))
    assert any(c.kernel == "depthwise_conv2d_f32" and c.variant == "neon" for c in fast.lowered.calls)
    feeds = random_samples(fast.manifest["inputs"], 2, seed=3)
    runs = zip(qemu_user.run_generated(fast.files, "t", feeds, target),
               qemu_user.run_generated(slow.files, "t", feeds, target))
    for got, want in runs:
        for name in g.outputs:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
