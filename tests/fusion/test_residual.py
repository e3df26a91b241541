"""Residual fusion (codegen/fusion/residual.py): a convolution with the Add of a ResNet block
in its epilogue, bit-exact with the unfused pair on the host and on the Cortex-M4's DSP kernel,
offered where the convolution's kernel variant has a fused one, declined when it does not pay."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.fusion.planner import plan_fusion
from codegen.fusion.residual import residual_candidates
from codegen.ir import Graph, GraphBuilder, Quant, run_graph
from codegen.targets import load_target
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples
from helpers import build_graph


def _conv(b: GraphBuilder, x: str, cin: int, cout: int, k: int, rng, stride: int = 1, activation: str = "none",
          scale: float = 0.05) -> str:
    w = rng.integers(-127, 128, (cout, k, k, cin), dtype=np.int8)
    ws = rng.uniform(0.002, 0.01, cout)
    in_scale = b.g.values[x].quant.scale[0]
    bias = b.const(f"b_{len(b.g.nodes)}", rng.integers(-2000, 2000, cout).astype(np.int32),
                   quant=Quant.of(in_scale * ws, 0, 0))
    p = k // 2
    return b.node("Conv2D", [x, b.const(f"w_{len(b.g.nodes)}", w, quant=Quant.of(ws, 0, 0)), bias],
                  strides=(stride, stride), pads=(p, p, p, p), activation=activation,
                  quant=Quant.of(scale * float(rng.uniform(0.8, 1.2)), int(rng.integers(-20, 20))))


def resnet_blocks(seed: int = 0, size: int = 8, c: int = 8) -> Graph:
    """Two int8 ResNet blocks: identity shortcut (Add(conv, x)), then a projection shortcut
    (a strided 1x1 convolution) with the Add's inputs the other way round."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("resnet_blocks")
    x = b.input("x", "int8", (1, size, size, c), Quant.of(0.04, -3))
    h = _conv(b, x, c, c, 3, rng, activation="relu")
    h = _conv(b, h, c, c, 3, rng)
    x = b.node("Add", [h, x], activation="relu", quant=Quant.of(0.06, -128))
    h = _conv(b, x, c, 2 * c, 3, rng, stride=2, activation="relu")
    h = _conv(b, h, 2 * c, 2 * c, 3, rng)
    s = _conv(b, x, c, 2 * c, 1, rng, stride=2)
    y = b.node("Add", [s, h], activation="relu", quant=Quant.of(0.07, -128))
    return b.output(y).build()


def same_input_block(seed: int = 2) -> Graph:
    """y = conv(h) + h: the residual is the convolution's input too (never written over). Six
    channels: with 8 (the DSP kernel's interleaved-window path) and a kernel called once, GCC
    inlines it with the call's constants and stops the build with -Waggressive-loop-optimizations
    in kiln_dsp_s8_to_s16_il (on main too: a single conv2d_s8 call of that shape)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("same_input")
    x = b.input("x", "int8", (1, 8, 8, 6), Quant.of(0.04, -3))
    h = _conv(b, _conv(b, x, 6, 6, 3, rng, activation="relu"), 6, 6, 3, rng, activation="relu")
    y = b.node("Add", [_conv(b, h, 6, 6, 3, rng), h], activation="relu", quant=Quant.of(0.06, -128))
    return b.output(y).build()


def _outputs(g: Graph, target: str, fusion: str, samples):
    build = build_graph(g, target=target, fusion=fusion)
    if target == "host":
        return build, run_generated(build.files, "t", samples, sanitize=True)
    from codegen.verify import qemu

    return build, qemu.run_generated(build.files, "t", samples, load_target(target))


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
@pytest.mark.parametrize("make, fused_count", [(resnet_blocks, 2), (same_input_block, 1)])
def test_fused_blocks_are_bit_exact(target, make, fused_count):
    g = make()
    samples = random_samples([{"name": "x", "dtype": "int8", "shape": list(g.values["x"].shape)}], 3, 1)
    unfused, want = _outputs(g, target, "off", samples)
    fused, got = _outputs(g, target, "auto", samples)
    kernels = [c.kernel for c in fused.lowered.calls]
    assert kernels.count("conv2d_add_s8") == fused_count and "add_bcast_s8" not in kernels
    variant = {c.variant for c in fused.lowered.calls if c.kernel == "conv2d_add_s8"}
    assert variant == {"reference" if target == "host" else "cortex_m_dsp"}
    assert fused.manifest["arena_bytes"] <= unfused.manifest["arena_bytes"]
    for sample, a, b in zip(samples, got, want):
        ref = run_graph(g, sample)
        for name in g.outputs:
            np.testing.assert_array_equal(a[name], b[name], err_msg=f"{target}: fused against unfused")
            np.testing.assert_array_equal(a[name], ref[name], err_msg=f"{target}: fused against the interpreter")


def test_candidates_need_a_sole_reader_and_no_broadcast():
    g = resnet_blocks()
    found = residual_candidates(g)
    # block 1: the second conv (the Add's other input is the block input); block 2: both convs
    assert len(found) == 3 and len({c.add for c in found}) == 2
    rng = np.random.default_rng(1)
    b = GraphBuilder("shared")
    x = b.input("x", "int8", (1, 4, 4, 8), Quant.of(0.04, -3))
    h = _conv(b, x, 8, 8, 3, rng)
    y = b.node("Add", [h, x], quant=Quant.of(0.06, 0))
    z = b.node("Add", [h, y], quant=Quant.of(0.08, 0))  # h read twice: not fusable into y's Add
    g2 = b.output(z).build()
    assert residual_candidates(g2) == []


def test_offered_only_where_the_conv_variant_has_a_fused_kernel():
    g = resnet_blocks()
    a53 = plan_fusion(g, load_target("cortex-a53"))  # NEON runs the convolution; no NEON conv2d_add_s8
    assert not [d for d in a53.decisions if d.kind == "residual"]
    for target in ("cortex-m4", "cortex-m55"):  # the DSP and the Helium conv2d_add_s8
        plan = plan_fusion(g, load_target(target))
        taken = [d for d in plan.decisions if d.kind == "residual" and d.fused]
        assert len(taken) == 2 and all(d.fused_cost.cycles < d.unfused_cost.cycles for d in taken), target


def test_size_objective_declines_the_tables():
    """The epilogue's 2 KB of rescale tables cost more flash than the Add's call saves."""
    plan = plan_fusion(resnet_blocks(), load_target("cortex-m4"), "size")
    decisions = [d for d in plan.decisions if d.kind == "residual"]
    assert decisions and not any(d.fused for d in decisions)
