"""The DSP int8 fully connected layer over int16 weights (codegen/kernels/cortex_m_dsp/
fully_connected_s8.py: wide_rows, the default) and over bytes (--optimize size): the packing
against the lanes SXTB16 makes of the input, the choice and its flash, and the layers run in
QEMU on the M4 (Armv7E-M) and M33 (Armv8-M Mainline) bit-exact with the reference: an odd
number of input words (the loop's single group after its pairs), a partial last word, output
channels not a multiple of 4, several rows, weights down to -128, both requantization paths;
also at -O0."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.kernels.cortex_m_dsp.fully_connected_s8 import wide_rows
from codegen.targets import load_target
from cortex_m_testing import build
from helpers import build_graph
from ops.linear_testing import int8_layer
from test_dsp_kernels import check_target

# (input, weights, attributes, layer options)
CASES = [((1, 640), (12, 640), {}, {}),  # AD's first layer: 160 words, pairs only
         ((1, 44), (9, 44), {"activation": "relu"}, {"w_min": -128}),  # 11 words: one group after the pairs
         ((3, 37), (6, 37), {}, {"per_channel": False}),  # a partial last word, three rows
         ((2, 3), (5, 3), {}, {"gain": 200.0, "bias": False}),  # only the partial word; left shifts
         ((1, 128), (8, 128), {"activation": "relu6"}, {"in_zp": -128, "out_zp": -128})]


def _layers():
    return [int8_layer("FullyConnected", x, w, seed=400 + k, **opts, **attrs)
            for k, (x, w, attrs, opts) in enumerate(CASES)]


def _sxtb16_lanes(word: np.ndarray, ror8: bool) -> np.ndarray:
    """The two int16 lanes SXTB16 (or SXTB16 ROR #8) makes of each little-endian int32 word."""
    b = word.astype("<i4").view(np.int8).reshape(-1, 4)
    return b[:, [1, 3]] if ror8 else b[:, [0, 2]]


def test_wide_rows_meet_the_input_lanes():
    """SMLAD of each packed word with the input lanes sums to the rows' dot products."""
    rng = np.random.default_rng(1)
    w = rng.integers(-128, 128, (7, 22), dtype=np.int8)
    x = rng.integers(-128, 128, 22, dtype=np.int8)
    words = wide_rows(w)
    assert words.size == 8 * 24 // 2  # rows to 8, depth to 24, two int16 per word
    lanes = words.astype("<i4").view("<i2").reshape(2, 6, 4, 2, 2)  # [block, group, row, even/odd, lane]
    words_x = np.concatenate([x, np.zeros(2, np.int8)]).view("<i4")  # the input read in place, zero-padded
    even, odd = _sxtb16_lanes(words_x, False).astype(np.int64), _sxtb16_lanes(words_x, True).astype(np.int64)
    acc = np.zeros((2, 4), np.int64)
    for blk in range(2):
        for g in range(6):
            for r in range(4):
                acc[blk, r] += lanes[blk, g, r, 0] @ even[g] + lanes[blk, g, r, 1] @ odd[g]
    np.testing.assert_array_equal(acc.reshape(-1)[:7], w.astype(np.int64) @ x.astype(np.int64))


def test_int16_weights_by_default_bytes_for_size():
    g = int8_layer("FullyConnected", (1, 37), (10, 37), seed=1)
    fast = build(g, load_target("cortex-m4"))
    (call,) = fast.lowered.calls
    w = next(c for c in fast.lowered.consts if c.name.startswith("w_"))
    assert call.params["wide"] == 1 and call.params["widen"] == 0 and w.data.size == 12 * 40 // 2
    assert fast.manifest["arena_bytes"] < 2 * 40  # no int16 copy of the row in scratch
    small = build_graph(g, "t", target="cortex-m4", optimize="size")
    (call,) = small.lowered.calls
    w = next(c for c in small.lowered.consts if c.name.startswith("w_"))
    assert call.params["wide"] == 0 and w.data.size == 12 * 40 // 4
    assert small.manifest["weights_bytes"] < fast.manifest["weights_bytes"]


@pytest.mark.usefixtures("cortex_m")
@pytest.mark.parametrize("target,opt_level,optimize", [("cortex-m4", None, "speed"), ("cortex-m33", None, "speed"),
                                                       ("cortex-m4", "O0", "speed"), ("cortex-m4", None, "size")])
def test_dsp_fully_connected_equals_the_reference(target, opt_level, optimize):
    check_target(_layers(), target, "cortex_m_dsp", {"fully_connected_s8"}, opt_level=opt_level, optimize=optimize)
