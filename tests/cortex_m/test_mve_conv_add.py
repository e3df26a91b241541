"""The Helium convolution with the residual Add in its epilogue (templates/kernels/mve/
conv2d_add_s8.c.j2) equals the numpy reference, bit-exact with TFLite Micro, in QEMU on the
Cortex-M55: 3x3 layers (windows read in place by rows, copied windows) and 1x1 ones (the
direct pointwise path), the convolution as either Add input, the Add's activation or none,
output channels not a multiple of 4 (the last vector of the Add and of a block predicated),
at -O2, -O0 and --optimize size."""

from __future__ import annotations

import pytest

from cortex_m.test_dsp_kernels import check_target
# tests/ops, a namespace package beside this folder
from ops.linear_testing import int8_conv_add

pytestmark = pytest.mark.usefixtures("cortex_m")

# (input NHWC, weights OHWI, conv_first, add_activation, convolution attributes)
CASES = [
    ((1, 7, 6, 16), (8, 3, 3, 16), True, "relu", {"pads": (1, 1, 1, 1)}),  # rows of whole vectors in place
    ((1, 7, 7, 3), (6, 3, 3, 3), False, "none", {"pads": (1, 1, 1, 1)}),  # copied windows, 6 channels
    ((1, 9, 8, 5), (10, 3, 3, 5), True, "none", {"strides": (2, 2), "pads": (0, 0, 1, 1)}),  # stride 2, 10 channels
    ((1, 5, 5, 16), (7, 1, 1, 16), False, "relu", {}),  # pointwise, a partial block, 175 values (not 4k)
    ((1, 6, 6, 24), (8, 1, 1, 24), True, "relu", {}),  # pointwise, whole blocks
    ((2, 5, 4, 8), (5, 3, 3, 8), False, "relu", {"pads": (1, 1, 1, 1)}),  # two images, odd channels
]


def _graphs(seed: int, cases=CASES):
    return [int8_conv_add(x, w, seed=seed + k, conv_first=first, add_activation=act, **attrs)
            for k, (x, w, first, act, attrs) in enumerate(cases)]


def test_mve_conv_add_equals_the_reference():
    check_target(_graphs(700), "cortex-m55", "mve", {"conv2d_add_s8"})


def test_mve_conv_add_in_a_debug_build_equals_the_reference():
    check_target(_graphs(720), "cortex-m55", "mve", {"conv2d_add_s8"}, opt_level="O0")


def test_mve_conv_add_built_for_size_equals_the_reference():
    check_target(_graphs(740, CASES[:4]), "cortex-m55", "mve", {"conv2d_add_s8"}, optimize="size")
