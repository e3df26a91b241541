"""The NEON (Armv8.0) int8 convolution's four-by-four pairs tile as one assembly statement
(runtime_c/kiln_neon_s8.h: kiln_neon_pairs_tile4x4), each layer alone in its program on the
Cortex-A53, so that its constant shape reaches the assembly (the inline-asm operands' early
clobbers): window rows of one and of three 16-k groups, strides 1 and 2, dilated rows,
batch 2, output channels and pixels that leave partial tiles, left shifts; the padded ones
banded (their input rows copied with their padding, every window read there)."""

from __future__ import annotations

import pytest

from codegen.kernels.linear import NEON_MLA_PAIRS
from codegen.targets import load_target
from codegen.verify import qemu_user
from codegen.verify.samples import random_samples
from cortex_a_testing import build
from helpers import assert_bit_exact
# tests/ops, a namespace package beside this folder
from ops.linear_testing import int8_layer

pytestmark = pytest.mark.usefixtures("cortex_a")

LAYERS = [
    ((1, 6, 5, 16), (5, 3, 3, 16), {"pads": (1, 1, 1, 1)}),  # 3 segments of 3 groups, 30 pixels
    ((2, 7, 7, 16), (10, 3, 3, 16), {"strides": (2, 2), "pads": (1, 1, 1, 1), "in_zp": -128}),
    ((1, 9, 6, 16), (6, 3, 3, 16), {"dilations": (2, 1), "pads": (2, 1, 2, 1), "gain": 3000.0}),
    ((1, 5, 5, 16), (6, 3, 1, 16), {"pads": (1, 0, 1, 0), "activation": "relu6"}),  # segments of 1 group
    ((1, 5, 5, 48), (10, 1, 1, 48), {"gain": 3000.0, "out_zp": -60}),  # one segment of 3 groups
]


@pytest.mark.parametrize("k", range(len(LAYERS)))
def test_pairs_tile_alone_equals_the_reference(k):
    x_shape, w_shape, attrs = LAYERS[k]
    g = int8_layer("Conv2D", x_shape, w_shape, seed=9700 + k, **attrs)
    res = build(g, "cortex-a53")
    assert {c.params["mode"] for c in res.lowered.calls if "mode" in c.params} == {NEON_MLA_PAIRS}
    assert all((c.params["band_pitch"] > 0) == ("pads" in attrs) for c in res.lowered.calls if "band_pitch" in c.params)
    feeds = random_samples(res.manifest["inputs"], 2, seed=5)
    assert_bit_exact(g, feeds, qemu_user.run_generated(res.files, "t", feeds, load_target("cortex-a53")))

