"""The NEON transposed convolutions (templates/kernels/neon/conv_transpose2d_{s8,f32}.c.j2, one
convolution per stride phase) equal the numpy reference under qemu-aarch64: int8 bit-exact
with TFLite Micro's TRANSPOSE_CONV in the three multiply modes (SMULL/SMLAL2 pairs on the
Cortex-A53, single SMULL when a weight is -128, SDOT on the Cortex-A55), float32 within float
tolerance (FMLA); padding SAME, VALID and negative, strides 1, 2, 3x2 and past the window (the
bias alone), odd channel counts, partial tiles of pixels and of channel blocks, two images."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import run_graph
from codegen.kernels.linear import NEON_MLA, NEON_MLA_PAIRS, NEON_SDOT
from codegen.kernels.select import variant_for_name as kernel_variant
from codegen.targets import load_target
from codegen.verify import qemu_user
from codegen.verify.compare import compare_output
from codegen.verify.samples import random_samples
from cortex_a_testing import build
from helpers import assert_bit_exact
from ops.linear_testing import float_layer, int8_layer, merge  # tests/ops, a namespace package beside this folder

pytestmark = pytest.mark.usefixtures("cortex_a")

# (input NHWC, weights OHWI, attributes, int8 layer options)
CASES = [
    ((1, 8, 8, 16), (16, 3, 3, 16), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {}),  # the U-Net's: SAME
    ((1, 5, 4, 8), (6, 3, 3, 8), {}, {"in_zp": -128}),  # VALID, stride 1
    ((1, 4, 5, 5), (7, 3, 2, 5), {"strides": (3, 2), "pads": (1, 0, 1, 1)}, {}),  # odd channels, 3x2
    ((2, 3, 3, 3), (5, 2, 2, 3), {"strides": (2, 2)}, {"bias": False, "per_channel": False}),  # two images
    ((1, 4, 4, 12), (20, 4, 4, 12), {"strides": (2, 2), "pads": (1, 1, 1, 1)}, {"in_zp": 100, "out_zp": -60}),
    ((1, 3, 3, 4), (4, 1, 1, 4), {"strides": (2, 3)}, {}),  # stride past the window: rows and columns of bias
    ((1, 3, 4, 6), (3, 3, 3, 6), {"strides": (2, 2), "pads": (1, 1, -1, -2)}, {"in_zp": 7}),  # output padding
    ((1, 3, 3, 8), (4, 2, 2, 8), {"strides": (2, 2)}, {"gain": 3000.0, "out_zp": -20}),  # left shifts
    ((2, 2, 3, 9), (13, 3, 3, 9), {"strides": (1, 1), "pads": (1, 1, 1, 1)}, {"gain": 60.0}),  # shifts of 1 to 3
]


def _int8_layers(w_min: int = -127):
    return [int8_layer("ConvTranspose2D", x, w, seed=600 + k, w_min=w_min, **opts, **attrs)
            for k, (x, w, attrs, opts) in enumerate(CASES)]


@pytest.mark.parametrize("target, w_min, mode, variant", [
    ("cortex-a53", -127, NEON_MLA_PAIRS, "neon"),
    ("cortex-a53", -128, NEON_MLA, "neon"),  # a weight of -128: single products
    ("cortex-a55", -127, NEON_SDOT, "neon_dotprod"),
])
def test_neon_int8_conv_transpose2d_bit_exact(target, w_min, mode, variant):
    layers = _int8_layers(w_min)
    g, _, _ = merge(layers)
    t = load_target(target)
    res = build(g, t)
    assert kernel_variant("conv_transpose2d_s8", t.variants) == variant
    calls = [c for c in res.lowered.calls if c.kernel == "conv_transpose2d_s8"]
    assert len(calls) == len(CASES) and mode in {c.params["mode"] for c in calls}  # small layers may draw no -128
    feeds = random_samples(res.manifest["inputs"], 2, seed=5)
    assert_bit_exact(g, feeds, qemu_user.run_generated(res.files, "t", feeds, t))


def test_neon_float_conv_transpose2d_within_tolerance():
    layers = [float_layer("ConvTranspose2D", x, w, seed=700 + k, bias=opts.get("bias", True), **attrs)
              for k, (x, w, attrs, opts) in enumerate(CASES)]
    layers.append(float_layer("ConvTranspose2D", (1, 4, 5, 6), (7, 3, 3, 6), seed=799, strides=(2, 2),
                              pads=(0, 0, 1, 1), activation="relu6"))
    g, _, _ = merge(layers)
    t = load_target("cortex-a53")
    res = build(g, t)
    assert kernel_variant("conv_transpose2d_f32", t.variants) == "neon"
    assert sum(c.kernel == "conv_transpose2d_f32" and c.variant == "neon" for c in res.lowered.calls) == len(layers)
    feeds = random_samples(res.manifest["inputs"], 2, seed=5)
    for feed, got in zip(feeds, qemu_user.run_generated(res.files, "t", feeds, t)):
        want = run_graph(g, feed)
        for name in g.outputs:
            assert compare_output(name, got[name], want[name]).ok, name
            assert np.isfinite(got[name]).all()
