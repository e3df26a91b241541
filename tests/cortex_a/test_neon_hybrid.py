"""The NEON and SDOT hybrid convolution (templates/kernels/neon*/hybrid_conv2d_f32,
runtime_c/kiln_neon_hybrid.h) equals the numpy reference bit for bit under qemu-aarch64 (the
reference is bit-exact with LiteRT's builtin hybrid kernels: tests/ops/test_hybrid_conv2d.py):
every case of that test (per-tensor and per-channel scales, so symmetric and asymmetric input
codes, strides, dilations, padding, the KWS stem with its tail of two after blocks of eight)
plus pointwise layers read directly (16k channels) with output channels that fill no whole
block, on inputs with the rounding edge 0.49999997 inside a block of eight and in the tail."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.frontends.tflite import load_bytes
from codegen.ir import run_graph
from codegen.kernels.select import variant_for_name
from codegen.targets import load_target
from codegen.verify import qemu_user
from cortex_a_testing import build
from ops.linear_testing import merge
from ops.test_hybrid_conv2d import CASES, EDGE, hybrid_model

POINTWISE = [((1, 5, 3, 32), (13, 1, 1, 32), dict(padding="VALID"), "channel"),  # direct, 8 + 5 channels
             ((1, 4, 4, 16), (6, 1, 1, 16), dict(padding="VALID", fused_activation_function="RELU"), "tensor"),
             ((2, 3, 3, 64), (20, 1, 1, 64), dict(padding="VALID"), "tensor")]


def _graphs():
    cases = CASES + POINTWISE
    graphs = [load_bytes(hybrid_model(*case, seed=k)) for k, case in enumerate(cases)]
    graphs.append(load_bytes(hybrid_model((1, 5, 5, 3), (2, 3, 3, 3), dict(padding="SAME"), "channel",
                                          seed=99, bias=False)))
    return graphs


def _feeds(g, ins):
    rng = np.random.default_rng(5)
    feeds = []
    for scale, positive in ((1.0, False), (50.0, False), (3.0, True)):
        feed = {}
        for (name,) in ins:
            x = (rng.standard_normal(g.values[name].shape) * scale).astype(np.float32)
            x = np.abs(x) if positive else x  # post-ReLU: the asymmetric zero point at -128
            flat = x.reshape(-1)
            flat[0] = 127.0
            flat[1:] = np.clip(flat[1:], -127, 127)
            flat[3], flat[-1] = EDGE, (EDGE if positive else -EDGE)
            feed[name] = x
        feeds.append(feed)
    return feeds


@pytest.mark.parametrize("target, variant", [("cortex-a53", "neon"), ("cortex-a76", "neon_dotprod")])
def test_neon_hybrid_conv2d_equals_reference_bit_for_bit(target, variant):
    t = load_target(target)
    reason = qemu_user.missing_tools(t)
    if reason:
        pytest.skip(reason)
    g, ins, outs = merge(_graphs())
    res = build(g, t)
    assert variant_for_name("hybrid_conv2d_f32", t.variants) == variant
    assert "kiln_neon_hybrid.h" in res.files
    feeds = _feeds(g, ins)
    for feed, got in zip(feeds, qemu_user.run_generated(res.files, "t", feeds, t)):
        want = run_graph(g, feed)
        for name in outs:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
