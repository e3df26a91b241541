"""The Helium int8 transposed convolution (templates/kernels/mve/conv_transpose2d_s8.c.j2: one
convolution per stride phase) equals the numpy reference, bit-exact with TFLite Micro's
TRANSPOSE_CONV, in QEMU on the Cortex-M55: the cases of the DSP kernel's test (padding SAME,
VALID and negative, strides 1, 2, 3x2 and past the window, odd channel counts, per-tensor
weights, two images, both shift directions); also built at -O0 (the sums by intrinsics)."""

from __future__ import annotations

import pytest

from codegen.targets import load_target
from cortex_m_testing import build
from ops.linear_testing import int8_layer
from test_dsp_conv_transpose2d import CASES
from test_dsp_kernels import check_target

pytestmark = pytest.mark.usefixtures("cortex_m")


def _layers():
    return [int8_layer("ConvTranspose2D", x, w, seed=500 + k, **opts, **attrs)
            for k, (x, w, attrs, opts) in enumerate(CASES)]


@pytest.mark.parametrize("opt_level", [None, "O0"])
def test_mve_conv_transpose2d_equals_the_reference(opt_level):
    check_target(_layers(), "cortex-m55", "mve", {"conv_transpose2d_s8"}, opt_level=opt_level)


def test_mve_conv_transpose2d_packs_per_phase():
    """Per phase (py, px) its taps' rows padded to 16 bytes and four channels, its own output
    stage table (the input offset folded with the phase's weights): 3x2 taps at stride 2 are
    phases of 2x1, 2x1, 1x1 and 1x1 taps."""
    g = int8_layer("ConvTranspose2D", (1, 3, 3, 5), (7, 3, 2, 5), seed=1, strides=(2, 2))
    (call,) = build(g, load_target("cortex-m55")).lowered.calls
    phases = call.params["phases"].data.reshape(-1, 2)
    assert phases[:, 1].tolist() == [16, 16, 16, 16] and call.params["k16"] == 16
    assert phases[:, 0].tolist() == [0, 128, 256, 384]  # 8 rows (7 padded to 8) x 16 bytes each
    assert call.params["rq"].data.size == 4 * 8 * 4  # four phases, 8 channels, 4 words
