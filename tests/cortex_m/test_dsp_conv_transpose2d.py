"""The DSP int8 transposed convolution (templates/kernels/cortex_m_dsp/conv_transpose2d_s8.c.j2)
equals the numpy reference, bit-exact with TFLite Micro's TRANSPOSE_CONV, in QEMU on the M4
(Armv7E-M) and M33 (Armv8-M Mainline): padding SAME and VALID and negative (output padding),
strides 1, 2, 3x2 and larger than the window (outputs no tap reaches: the bias alone),
channel counts that are not multiples of 4, per-tensor and per-channel weights, no bias, two
images, both requantization paths; also built at -O0."""

from __future__ import annotations

import pytest

from codegen.targets import load_target
from cortex_m_testing import build
from ops.linear_testing import int8_layer
from test_dsp_kernels import check_target

pytestmark = pytest.mark.usefixtures("cortex_m")

# (input NHWC, weights OHWI, attributes, layer options)
CASES = [
    ((1, 8, 8, 16), (16, 3, 3, 16), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {}),  # the U-Net's: SAME
    ((1, 5, 4, 8), (6, 3, 3, 8), {}, {"in_zp": -128}),  # VALID, stride 1
    ((1, 4, 5, 5), (7, 3, 2, 5), {"strides": (3, 2), "pads": (1, 0, 1, 1)}, {}),  # odd channels, 3x2
    ((2, 3, 3, 3), (5, 2, 2, 3), {"strides": (2, 2)}, {"bias": False, "per_channel": False}),  # two images
    ((1, 4, 4, 12), (9, 4, 4, 12), {"strides": (2, 2), "pads": (1, 1, 1, 1)}, {"in_zp": 100, "out_zp": -60}),
    ((1, 3, 3, 4), (4, 1, 1, 4), {"strides": (2, 3)}, {}),  # stride past the window: rows and columns of bias
    ((1, 3, 4, 6), (3, 3, 3, 6), {"strides": (2, 2), "pads": (1, 1, -1, -2)}, {"in_zp": 7}),  # output padding
    ((1, 3, 3, 8), (4, 2, 2, 8), {"strides": (2, 2)}, {"gain": 3000.0, "out_zp": -20}),  # left shifts
    ((2, 2, 3, 9), (13, 3, 3, 9), {"strides": (1, 1), "pads": (1, 1, 1, 1)}, {"gain": 60.0}),  # shifts of 1 to 3
]


def _layers():
    return [int8_layer("ConvTranspose2D", x, w, seed=300 + k, **opts, **attrs)
            for k, (x, w, attrs, opts) in enumerate(CASES)]


@pytest.mark.parametrize("target,opt_level", [("cortex-m4", None), ("cortex-m33", None), ("cortex-m4", "O0")])
def test_dsp_conv_transpose2d_equals_the_reference(target, opt_level):
    """At -O0 the dot products' assembly loops give way to intrinsics: still bit-exact."""
    check_target(_layers(), target, "cortex_m_dsp", {"conv_transpose2d_s8"}, opt_level=opt_level)


def test_dsp_conv_transpose2d_repacks_per_tap():
    """The DSP build carries the weights as int32 words, per tap the rows padded to blocks of
    four (output channels) by groups of four (input channels), and the bias in its records,
    not the int8 weights, the bias and the reference's multiplier and shift arrays."""
    g = int8_layer("ConvTranspose2D", (1, 3, 3, 5), (7, 3, 2, 5), seed=1, strides=(2, 2))
    dsp = build(g, load_target("cortex-m4"))
    (call,) = dsp.lowered.calls
    assert call.params["c4"] == 8 and call.params["o4"] == 8 and call.params["max_taps"] == 2
    w = next(c for c in dsp.lowered.consts if c.name.startswith("w_"))
    assert w.dtype == "int32" and w.data.size == 3 * 2 * 8 * 8 // 4
    assert sorted(c.name.split("_")[0] for c in dsp.lowered.consts) == ["rq", "w"]
