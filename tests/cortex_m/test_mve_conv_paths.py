"""The Helium int8 convolution's sweep paths (templates/kernels/mve/conv2d_s8.c.j2) equal the
numpy reference, bit-exact with TFLite Micro, in QEMU on the Cortex-M55: windows whose rows
are whole vectors read in place (kiln_conv2d_s8_blocks_rows) beside the paired border
windows, several pairs of copied windows per assembly sweep (copy_pairs), with and without a
last partial block of channels, and a pointwise layer's in-place pairs in one sweep."""

from __future__ import annotations

import pytest

from codegen.kernels.mve.conv2d_s8 import copy_pairs, padded_rows, rows_in_place, template_paths
from cortex_m.test_dsp_kernels import check_target
# tests/ops, a namespace package beside this folder
from ops.linear_testing import int8_layer

pytestmark = pytest.mark.usefixtures("cortex_m")

# (input NHWC, weights OHWI, attributes, layer options)
ROWS_IN_PLACE = [
    ((1, 7, 6, 16), (8, 3, 3, 16), {"pads": (1, 1, 1, 1)}, {}),  # rows of 48 bytes, borders paired
    ((1, 8, 7, 16), (4, 3, 3, 16), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {"in_zp": -128}),  # SAME, stride 2
    ((1, 6, 9, 32), (8, 3, 3, 32), {}, {"activation": "relu"}),  # unpadded: every window in place
    ((1, 9, 8, 16), (4, 3, 3, 16), {"dilations": (2, 1), "pads": (2, 1, 2, 1)}, {}),  # dilated rows
    ((1, 5, 11, 16), (8, 1, 3, 16), {"pads": (0, 2, 0, 2)}, {"gain": 3000.0}),  # one row, wide padding
    ((2, 6, 6, 16), (12, 3, 3, 16), {"pads": (1, 1, 1, 1), "activation": "relu6"}, {"out_zp": -20}),  # batches
    ((1, 6, 6, 16), (6, 3, 3, 16), {"pads": (1, 1, 1, 1)}, {}),  # six channels: the copying path
    ((1, 7, 6, 8), (8, 3, 3, 8), {"pads": (1, 1, 1, 1)}, {}),  # rows of 24 bytes padded to 32
    ((2, 6, 8, 8), (4, 3, 3, 8), {}, {"in_zp": 50}),  # padded rows, unpadded image: the last row copied
    ((1, 9, 9, 40), (8, 3, 3, 40), {"strides": (2, 2), "pads": (1, 1, 1, 1)}, {}),  # 120 -> 128, stride 2
]
COPIED = [
    ((1, 11, 10, 3), (8, 3, 3, 3), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {}),  # eight pairs a sweep
    ((1, 9, 9, 4), (7, 3, 3, 4), {"pads": (1, 1, 1, 1)}, {"in_zp": 40}),  # partial block at every pair
    ((2, 5, 5, 8), (5, 3, 3, 8), {"pads": (1, 1, 1, 1)}, {"gain": 60.0}),  # odd pixels, two images
    ((1, 13, 12, 40), (8, 1, 1, 40), {}, {}),  # pointwise: many pairs read in place in one sweep
    ((1, 7, 7, 24), (10, 1, 1, 24), {}, {"in_zp": -128}),  # pointwise, a partial block
    ((1, 13, 6, 1), (8, 5, 4, 1), {"strides": (2, 2), "pads": (2, 1, 2, 2)}, {"in_zp": 7}),  # KWS-like short rows, padded
]


def test_the_paths_are_the_ones_meant():
    in_place = [dict(k_h=w[1], k_w=w[2], in_c=x[3], stride_h=1, stride_w=1, pad_top=1, pad_left=1,
                     dilation_w=1, out_h=x[1], out_w=x[2], in_h=x[1], in_w=x[2], out_c=w[0])
                for x, w, _, _ in ROWS_IN_PLACE if w[0] % 4 == 0]
    assert all(rows_in_place(p) and {"rows", "rows3"} & template_paths(p, "speed") for p in in_place)
    assert all(template_paths(p, "size") == {"small"} for p in in_place)
    padded = [p for p in in_place if (p["k_w"] * p["in_c"]) % 16]
    assert len(padded) == 3 and all(padded_rows(p, "speed") and not padded_rows(p, "size") for p in padded)
    stem = dict(k_h=3, k_w=3, in_c=3, stride_h=2, stride_w=2, pad_top=0, pad_left=0, dilation_w=1,
                out_h=5, out_w=5, in_h=11, in_w=10, out_c=8)
    assert not padded_rows(stem, "speed")  # 48 bytes for 32: copied
    assert copy_pairs(stem, "speed") == 8 and copy_pairs(stem, "size") == 1


@pytest.mark.parametrize("cases,seed", [(ROWS_IN_PLACE, 300), (COPIED, 400)], ids=["rows-in-place", "copied"])
def test_mve_conv_paths_equal_the_reference(cases, seed):
    graphs = [int8_layer("Conv2D", x, w, seed=seed + k, **opts, **attrs) for k, (x, w, attrs, opts) in enumerate(cases)]
    check_target(graphs, "cortex-m55", "mve", {"conv2d_s8"})


@pytest.mark.parametrize("optimize", ["speed", "size"])
def test_mve_conv_paths_at_every_level_equal_the_reference(optimize):
    graphs = [int8_layer("Conv2D", x, w, seed=500 + k, **opts, **attrs)
              for k, (x, w, attrs, opts) in enumerate(ROWS_IN_PLACE[:3] + COPIED[:2])]
    check_target(graphs, "cortex-m55", "mve", {"conv2d_s8"}, optimize=optimize)


def test_mve_conv_paths_in_a_debug_build_equal_the_reference():
    graphs = [int8_layer("Conv2D", x, w, seed=600 + k, **opts, **attrs)
              for k, (x, w, attrs, opts) in enumerate(ROWS_IN_PLACE[:2] + ROWS_IN_PLACE[7:8] + COPIED[:2])]
    check_target(graphs, "cortex-m55", "mve", {"conv2d_s8"}, opt_level="O0")
