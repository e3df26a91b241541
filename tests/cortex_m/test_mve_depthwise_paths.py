"""The Helium int8 depthwise kernel's paths that pair output pixels
(templates/kernels/mve/depthwise_conv2d_s8.c.j2) equal the numpy reference, bit-exact with
TFLite Micro, in QEMU on the Cortex-M55: 1-D windows down one column two output rows at a
time (odd and even row counts, strides, dilations, a clamp that bites), and the 3x3 path's
ring of padded rows at strides 1 and 2 over tall and two-image inputs; the output stage's
shortened forms (codegen/kernels/mve/depthwise_conv2d_s8.py: requant_forms) and its general
one."""

from __future__ import annotations

import pytest

from codegen.targets import load_target
from cortex_m.test_dsp_kernels import check_target
from cortex_m_testing import build
# tests/ops, a namespace package beside this folder
from ops.linear_testing import int8_layer, merge

pytestmark = pytest.mark.usefixtures("cortex_m")

# (input NHWC, weights (1, KH, KW, C), attributes, layer options)
DEPTHWISE = [
    ((1, 28, 1, 32), (1, 5, 1, 32), {}, {"in_zp": -128}),  # streaming wake word's shape, even rows
    ((1, 13, 1, 16), (1, 3, 1, 16), {"dilations": (2, 1)}, {}),  # odd output rows: a last lone row
    ((1, 17, 1, 8), (1, 4, 1, 8), {"strides": (2, 1), "activation": "relu6"}, {"out_zp": -30}),
    ((2, 9, 1, 24), (1, 3, 1, 24), {}, {"gain": 60.0}),  # two images
    ((1, 11, 5, 16), (1, 3, 3, 16), {"pads": (1, 1, 1, 1)}, {}),  # the ring at stride 1, odd width
    ((1, 12, 9, 32), (1, 3, 3, 32), {"strides": (2, 2), "pads": (0, 0, 1, 1)}, {"in_zp": 17}),  # stride 2
    ((2, 7, 6, 8), (1, 3, 3, 8), {"pads": (1, 1, 1, 1), "activation": "relu"}, {}),  # eight channels, two images
    ((1, 12, 1, 16), (1, 4, 1, 16), {}, {"in_zp": -128}),  # an even count of taps: the 1-D pair's loop alone
]


def test_mve_depthwise_paths_equal_the_reference():
    graphs = [int8_layer("DepthwiseConv2D", x, w, seed=700 + k, **opts, **attrs)
              for k, (x, w, attrs, opts) in enumerate(DEPTHWISE)]
    check_target(graphs, "cortex-m55", "mve", {"depthwise_conv2d_s8"})


def test_mve_depthwise_paths_in_a_debug_build_equal_the_reference():
    graphs = [int8_layer("DepthwiseConv2D", x, w, seed=800 + k, **opts, **attrs)
              for k, (x, w, attrs, opts) in enumerate(DEPTHWISE[:2] + DEPTHWISE[4:6])]
    check_target(graphs, "cortex-m55", "mve", {"depthwise_conv2d_s8"}, opt_level="O0")


# The output stage as the model's calls allow (one template for them all): without a clamp
# (int8's own), a left shift or a channel without a right shift, its shortest form; with
# multipliers spread over 0.7 to 3.5 (gain: left shifts, channels of shift 0) and a clamp
# inside int8, its general form. Both at the group-major 3x3 path's pairs and lone pixels,
# the 1-D pairs and the per-pixel 3x3 path of an unpadded layer.
FORMS = [
    (((1, 7, 5, 16), (1, 3, 3, 16), {"pads": (1, 1, 1, 1)}, {}),
     ((1, 14, 1, 24), (1, 5, 1, 24), {}, {"in_zp": -128}),
     ((1, 6, 7, 8), (1, 3, 3, 8), {}, {})),
    (((1, 7, 5, 16), (1, 3, 3, 16), {"pads": (1, 1, 1, 1), "activation": "relu6"}, {"gain": 1000.0}),
     ((1, 14, 1, 24), (1, 5, 1, 24), {}, {"gain": 600.0, "in_zp": -128}),
     ((1, 6, 7, 8), (1, 3, 3, 8), {}, {"gain": 1000.0})),
]


@pytest.mark.parametrize("case,shortest", [(0, True), (1, False)])
def test_mve_depthwise_output_stage_forms_equal_the_reference(case, shortest):
    graphs = [int8_layer("DepthwiseConv2D", x, w, seed=9500 + 10 * case + k, **opts, **attrs)
              for k, (x, w, attrs, opts) in enumerate(FORMS[case])]
    code = build(merge(graphs)[0], load_target("cortex-m55")).files["t.c"]
    assert ("vqmovnb.s16 q4, q4" in code) == shortest  # int8's clamp
    assert ('"vand q7, %q[' in code) != shortest  # channels without a right shift
    assert ('"vshl.s32 %q[' in code) != shortest  # left shifts
    check_target(graphs, "cortex-m55", "mve", {"depthwise_conv2d_s8"})
