"""The NEON int8 kernels (templates/kernels/neon, .../neon_dotprod) equal the numpy reference,
which is bit-exact with TFLite Micro, on random layers run under qemu-aarch64: every path of
the register-tiled GEMM (pointwise layers read in place or copied, im2col windows, pixel and
channel counts that leave partial tiles, rows that are not a multiple of 16, one to six fully
connected rows), of the depthwise kernel (16- and 8-channel blocks, scalar tails, depth
multipliers, padding on every side, dilations), both requantization shifts, the three
multiply modes (SMULL/SMLAL2 pairs on the Cortex-A53, single SMULL when a weight is -128,
SDOT on the Cortex-A55), the broadcasting Add (vector rows, broadcast lanes, scalar rows
and tails) and the average pool (16-channel blocks, scalar channels, clipped windows). One
executable per target."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.compiler import BuildResult
from codegen.ir import Graph, GraphBuilder, Quant
from codegen.kernels.linear import NEON_MLA, NEON_MLA_PAIRS, NEON_SDOT
from codegen.kernels.select import variant_for_name as kernel_variant
from codegen.targets import load_target
from codegen.verify import qemu_user
from codegen.verify.samples import random_samples
from cortex_a_testing import build
from helpers import assert_bit_exact
# tests/ops, a namespace package beside this folder
from ops.linear_testing import int8_add, int8_average_pool, int8_layer, merge

pytestmark = pytest.mark.usefixtures("cortex_a")

# (input NHWC, weights, attributes and layer options)
CONV = [
    ((1, 5, 5, 16), (6, 1, 1, 16), {}),  # pointwise read in place; 25 pixels, 6 channels: partial tiles
    ((1, 4, 3, 32), (9, 1, 1, 32), {"in_zp": -128}),
    ((1, 5, 5, 8), (6, 1, 1, 8), {}),  # pointwise with 8 channels: copied to zero-padded columns
    ((1, 6, 6, 5), (4, 1, 1, 5), {"strides": (2, 2)}),  # strided pointwise, K = 5: im2col
    ((1, 7, 7, 3), (8, 3, 3, 3), {"pads": (1, 1, 1, 1)}),  # RGB stem, K = 27
    ((1, 9, 9, 3), (8, 3, 3, 3), {"strides": (2, 2), "pads": (0, 0, 1, 1), "in_zp": 127}),  # SAME
    ((2, 6, 5, 4), (5, 3, 3, 4), {"pads": (1, 1, 1, 1), "activation": "relu6", "out_zp": -100}),
    ((1, 9, 8, 2), (4, 3, 2, 2), {"dilations": (2, 3), "pads": (2, 3, 2, 3)}),
    ((1, 12, 4, 1), (6, 10, 4, 1), {"strides": (2, 2), "pads": (4, 1, 5, 1), "in_zp": 83}),  # KWS stem
    ((1, 4, 4, 16), (9, 3, 3, 16), {"pads": (1, 1, 1, 1), "per_channel": False, "bias": False}),
    ((1, 3, 3, 20), (6, 1, 1, 20), {"gain": 60.0}),  # right shifts of 1 to 3
    ((1, 3, 4, 8), (4, 2, 2, 8), {"gain": 3000.0, "out_zp": -60}),  # left shifts
    ((1, 7, 6, 12), (10, 1, 1, 12), {"strides": (2, 2)}),  # strided pointwise: SDOT in place, NEON short rows
    ((1, 8, 7, 3), (12, 3, 3, 3), {"strides": (2, 2), "pads": (1, 1, 1, 1), "in_zp": -128}),  # stem, padded
    # SDOT: rows of 20 pixels, so tiles within one output row, inside the image or with border
    # pixels; 8-channel rows of 24 bytes padded to 32 in place; 100 pixels: a tile of 4 last
    ((1, 5, 20, 8), (16, 3, 3, 8), {"pads": (1, 1, 1, 1)}),
    ((1, 4, 19, 3), (8, 3, 3, 3), {"pads": (1, 1, 1, 1), "in_zp": -5}),  # stem rows read as 16 bytes
    # SDOT: a stride-2 stem whose rows' last windows read their padded rows into the next image
    # row in place, except where that is the last image row (copied)
    ((1, 7, 13, 3), (8, 3, 3, 3), {"strides": (2, 2), "pads": (0, 0, 1, 1), "in_zp": 31}),
    ((1, 4, 8, 16), (12, 1, 1, 16), {"gain": 3000.0}),  # left shifts and a block of 4: the tile's sums out
    ((2, 3, 8, 20), (16, 1, 1, 20), {"activation": "relu"}),  # a 16-k group and one quad per run, batch 2
    # window rows of 48 bytes read in place: two images, stride 2, dilated rows, uneven padding
    ((2, 9, 7, 16), (10, 3, 3, 16), {"strides": (2, 2), "dilations": (2, 1), "pads": (2, 1, 1, 0), "in_zp": -128}),
    ((1, 6, 5, 32), (7, 3, 1, 32), {"pads": (1, 0, 1, 0), "gain": 3000.0}),  # rows of two groups, left shifts
    # SDOT: stride-1 pointwise of 8 channels, all shifting right: groups of 8 pixels in one
    # call per 8-channel block, then the last pixels (25: 3 groups and 1; 18 per image in batch 2)
    ((1, 5, 5, 8), (16, 1, 1, 8), {"in_zp": -128}),
    ((2, 3, 6, 8), (8, 1, 1, 8), {"activation": "relu6", "out_zp": 20}),
    ((1, 2, 4, 8), (8, 1, 1, 8), {"gain": 3000.0}),  # left shifts: the generic tile
    # SDOT: stride-1 pointwise of 16k channels, the same per block with any shifts
    ((1, 5, 5, 32), (16, 1, 1, 32), {"activation": "relu"}),  # two k groups, 3 pixel groups and 1
    ((2, 3, 6, 16), (8, 1, 1, 16), {"gain": 400.0, "out_zp": -60}),  # left, no and right shifts, batch 2
    ((1, 3, 3, 48), (24, 1, 1, 48), {"gain": 200.0, "in_zp": 90}),  # 3 k groups, 9 pixels
    # SDOT: strided pointwise, output rows of whole groups of 8 pixels: one run per row
    ((1, 6, 16, 16), (8, 1, 1, 16), {"strides": (2, 2)}),
    ((2, 3, 31, 32), (16, 1, 1, 32), {"strides": (2, 2), "gain": 400.0, "out_zp": 5}),
    # NEON: windows whose last group holds 8 bytes or fewer (40 = 16 + 16 + 8, 18 = 16 + 2), 25 pixels
    ((2, 5, 5, 40), (9, 1, 1, 40), {"in_zp": -128}),
    ((1, 9, 9, 2), (6, 3, 3, 2), {"strides": (2, 2), "pads": (1, 1, 1, 1)}),
    # SDOT, banded (padded layers, output rows of 8 pixels or more): the input rows of a few
    # output rows copied with their padding, windows read there by rows: left shifts, two
    # groups per row; stride 2 and batch 2; dilated rows; bands of 4 output rows (16 KB);
    # a 3x1 kernel whose rows of 20 bytes end in a quad and 5 channels (no assembly loop)
    ((1, 9, 16, 16), (16, 3, 3, 16), {"pads": (1, 1, 1, 1), "gain": 3000.0}),
    ((2, 11, 17, 16), (24, 3, 3, 16), {"strides": (2, 2), "pads": (1, 1, 1, 1), "activation": "relu"}),
    ((1, 10, 12, 64), (8, 3, 3, 64), {"pads": (1, 1, 1, 1), "dilations": (2, 1), "in_zp": -128}),
    ((1, 12, 40, 64), (8, 3, 3, 64), {"pads": (1, 1, 1, 1), "out_zp": 30}),
    ((1, 6, 10, 20), (5, 3, 1, 20), {"pads": (1, 0, 1, 0)}),
    # banded 3x3 at stride 1 over 16k channels, 8k pixels per row: the ten pixels under eight
    # windows loaded once per row and channel group (also the 16- and 64-channel cases above)
    ((2, 6, 16, 48), (8, 3, 3, 48), {"pads": (1, 1, 1, 1), "activation": "relu6", "in_zp": 5}),
    ((1, 10, 8, 32), (16, 3, 3, 32), {"dilations": (2, 1), "pads": (2, 1, 2, 1)}),
    # banded stems with windows compacted into 16-k groups: 3x3x3 (27 in 32) at stride 2,
    # left shifts, batch 2; 5x5x2 (50 in 64) with 16 and with 12 channels, 11-pixel rows
    ((2, 10, 20, 3), (16, 3, 3, 3), {"strides": (2, 2), "pads": (1, 1, 1, 1), "gain": 3000.0}),
    ((1, 9, 11, 2), (16, 5, 5, 2), {"pads": (2, 2, 2, 2), "in_zp": 40}),
    ((1, 9, 11, 2), (12, 5, 5, 2), {"pads": (2, 2, 2, 2), "activation": "relu6"}),
    # compacted windows over rows narrower than a tile (a band's pixels one run): the KWS stem
    # (10x4 over 49x10, stride 2: 25 rows of 5, bands of 8 rows, the last of 1), a small one
    ((1, 49, 10, 1), (64, 10, 4, 1), {"strides": (2, 2), "pads": (4, 1, 5, 1), "in_zp": 83}),
    ((1, 12, 4, 1), (16, 10, 4, 1), {"strides": (2, 2), "pads": (4, 1, 5, 1), "gain": 3000.0}),
    # SDOT: stride-1 pointwise whose last 6 or 7 pixels run as one more group overlapping the one
    # before; a clamp that bites (relu6) and one that does not (no activation: left out)
    ((1, 3, 5, 32), (16, 1, 1, 32), {"activation": "relu6", "out_zp": 20}),  # 15 pixels
    ((2, 2, 7, 8), (8, 1, 1, 8), {"in_zp": 5}),  # 14 pixels per image, 8 channels
    ((1, 1, 15, 16), (24, 1, 1, 16), {"gain": 400.0}),  # left shifts, 15 pixels in one row
    # NEON: the four-by-four pairs tile as one assembly loop (kiln_neon_pairs_tile4x4): window
    # rows of one group (3x1 of 16: three segments of one), 3x3 of 16 channels at stride 1
    # (in place and border windows), stride 2 with batch 2, dilated rows, a 48-channel
    # pointwise (three groups of one row), left shifts; 6 and 10 output channels, 25 pixels
    ((1, 5, 5, 16), (6, 3, 1, 16), {"pads": (1, 0, 1, 0)}),
    ((2, 7, 7, 16), (10, 3, 3, 16), {"strides": (2, 2), "pads": (1, 1, 1, 1), "in_zp": -128}),
    ((1, 9, 6, 16), (6, 3, 3, 16), {"dilations": (2, 1), "pads": (2, 1, 2, 1), "gain": 3000.0}),
    ((1, 5, 5, 48), (10, 1, 1, 48), {"gain": 3000.0, "out_zp": -60}),
]
DEPTHWISE = [
    ((1, 6, 5, 16), (1, 3, 3, 16), {"pads": (1, 1, 1, 1)}),  # two blocks of 8, padded
    ((1, 7, 7, 24), (1, 3, 3, 24), {"strides": (2, 2), "in_zp": -128}),
    ((1, 8, 8, 12), (1, 3, 3, 12), {"strides": (2, 2), "pads": (0, 0, 1, 1)}),  # 8 + a scalar group of 4
    ((1, 9, 1, 10), (1, 5, 1, 10), {}),  # 1-D window, 8 + 2 channels
    ((2, 6, 6, 8), (1, 3, 2, 8), {"dilations": (2, 1), "pads": (2, 1, 2, 0), "activation": "relu6"}),
    ((1, 5, 4, 3), (1, 3, 3, 6), {"depth_multiplier": 2, "pads": (1, 1, 1, 1)}),  # scalar path
    ((1, 4, 4, 8), (1, 3, 3, 8), {"pads": (1, 1, 1, 1), "gain": 100.0}),
    ((1, 5, 5, 8), (1, 3, 3, 8), {"pads": (1, 1, 1, 1), "gain": 500.0, "in_zp": 100}),
    ((1, 7, 9, 8), (1, 3, 3, 8), {}),  # 3x3 rows, 8 channels at stride 1: pixel pairs, then an odd one
    ((1, 9, 8, 40), (1, 3, 3, 40), {"strides": (2, 2), "pads": (0, 0, 1, 1), "in_zp": -7}),  # 16 + 16 + 8
    ((1, 6, 7, 24), (1, 3, 3, 24), {"pads": (2, 1, 1, 2), "activation": "relu6"}),  # uneven padding
    ((1, 6, 6, 16), (1, 3, 3, 16), {"pads": (3, 3, 3, 3)}),  # six border columns: the per-pixel path
    ((1, 7, 8, 8), (1, 3, 3, 8), {"strides": (2, 2), "pads": (1, 1, 1, 1), "in_zp": 60}),  # 8 lanes, both borders
    ((1, 5, 6, 24), (1, 3, 3, 24), {"pads": (1, 1, 1, 1), "gain": 80.0}),  # left shifts, borders in the row kernel
    # tall and narrow: 16 channels run down the columns (padding columns read in place), 8 along the rows
    ((2, 11, 4, 24), (1, 3, 3, 24), {"pads": (1, 1, 1, 1), "activation": "relu6"}),
    ((1, 12, 5, 32), (1, 3, 3, 32), {"strides": (2, 2), "pads": (0, 0, 1, 1), "in_zp": 9}),  # SAME, stride 2, columns
    ((1, 9, 2, 16), (1, 3, 3, 16), {"pads": (1, 1, 1, 1), "gain": 90.0}),  # no inner column: both columns padded
    ((1, 3, 3, 8), (1, 3, 3, 8), {"pads": (1, 1, 1, 1)}),  # 8 channels, one inner pixel: no pixel pair
    # k_h x 1 windows down the columns (kiln_depthwise_conv2d_s8_columns): one run per block
    # (a column image: 16 + 16 + 8 channels), rows of their own (stride 2 along the rows),
    # padding rows left to the per-pixel loop, dilated rows, 15 taps; a clamp that bites
    ((1, 12, 1, 40), (1, 5, 1, 40), {"in_zp": -128}),
    ((2, 9, 5, 16), (1, 3, 1, 16), {"strides": (1, 2), "pads": (1, 0, 1, 0), "activation": "relu6"}),
    ((1, 16, 2, 8), (1, 4, 1, 8), {"strides": (2, 1), "dilations": (2, 1), "in_zp": 7}),
    ((1, 17, 1, 16), (1, 15, 1, 16), {"activation": "relu", "out_zp": -128}),
    # not the column path (though its 3-tap clamped copy is there): left shifts; a padding
    # column on the right; then a single output pixel
    ((1, 8, 1, 16), (1, 3, 1, 16), {"gain": 3000.0, "activation": "relu6"}),
    ((1, 6, 2, 16), (1, 3, 1, 16), {"pads": (1, 0, 1, 1), "activation": "relu6"}),
    ((1, 10, 1, 24), (1, 10, 1, 24), {}),
]
FULLY_CONNECTED = [
    ((1, 64), (12, 64), {}),  # rows read in place
    ((3, 10), (7, 10), {"per_channel": False}),  # three single rows, padded to 16
    ((6, 33), (5, 33), {"activation": "relu", "in_zp": -128, "out_zp": -128}),  # a tile of 4, then 2
    ((1, 8), (9, 8), {"gain": 200.0, "bias": False}),
    # one row (kiln_neon_gemv): passes of 8 rows (SDOT 16, 16, then a block of 8), all stored whole
    ((1, 48), (40, 48), {"in_zp": 17}),
    # a tile of 4 is absent (2 rows): passes of 8 rows then 5 (SDOT: 16, then 13 stored as 8 + 5)
    ((2, 100), (29, 100), {"gain": 60.0}),
]
LINEAR = ("conv2d_s8", "depthwise_conv2d_s8", "fully_connected_s8")


def linear_layers(**extra) -> list[Graph]:
    graphs = []
    for op, cases, seed in (("Conv2D", CONV, 0), ("DepthwiseConv2D", DEPTHWISE, 100),
                            ("FullyConnected", FULLY_CONNECTED, 200)):
        for k, (x_shape, w_shape, attrs) in enumerate(cases):
            graphs.append(int8_layer(op, x_shape, w_shape, seed=seed + k, **{**attrs, **extra}))
    return graphs


ADD = [((1, 4, 4, 8), (1, 4, 4, 8), "none"),  # one contiguous row of 128: vectors only
       ((1, 3, 5, 6), (1, 1, 1, 6), "relu"),  # b repeats every 6: rows of 6, scalar
       ((2, 3, 1, 12), (1, 1, 5, 1), "relu6"),  # b one element per row of 12: broadcast lanes + tail
       ((1, 2, 3, 5), (1, 2, 3, 5), "none"),  # 30 elements: 3 vectors and a scalar tail
       ((1, 2, 2, 40), (1, 2, 2, 1), "relu"),  # b one element per row of 40: 16 + 16 lanes, 8, none left
       ((1, 1, 3, 19), (1, 1, 3, 19), "relu6"),  # one row of 57: 3 x 16 lanes, 8, a scalar
       ((1, 1, 1, 1), (1, 3, 4, 16), "none")]  # a broadcast: 48 of b's elements against one of a


POOL = [((1, 25, 5, 64), (25, 5), (25, 5), (0, 0, 0, 0)),  # KWS: global, 125 positions, 4 blocks
        ((1, 7, 6, 24), (3, 3), (2, 2), (1, 1, 1, 1)),  # windows clipped by the padding; 16 + 8 scalar
        ((1, 5, 5, 6), (2, 2), (1, 1), (0, 0, 0, 0)),  # scalar channels only
        ((1, 17, 16, 16), (17, 16), (1, 1), (0, 0, 0, 0))]  # 272 positions (beyond int16 sums)


def run_and_compare(g: Graph, res: BuildResult, target: str, feeds: list[dict]) -> None:
    assert_bit_exact(g, feeds, qemu_user.run_generated(res.files, "t", feeds, load_target(target)))


def modes(res: BuildResult) -> set[int]:
    return {c.params["mode"] for c in res.lowered.calls if "mode" in c.params}


@pytest.mark.parametrize("target, gemm_variant, mode", [("cortex-a53", "neon", NEON_MLA_PAIRS),
                                                         ("cortex-a55", "neon_dotprod", NEON_SDOT)])
def test_neon_linear_kernels_equal_the_reference(target, gemm_variant, mode):
    g, _, _ = merge(linear_layers())
    res = build(g, target)
    variants = load_target(target).variants
    assert {k: kernel_variant(k, variants) for k in LINEAR} == {
        "conv2d_s8": gemm_variant, "depthwise_conv2d_s8": "neon", "fully_connected_s8": gemm_variant}
    assert modes(res) == {mode}
    run_and_compare(g, res, target, random_samples(res.manifest["inputs"], 3, seed=5))


@pytest.mark.parametrize("target", ["cortex-a55", "cortex-a76"])
def test_sdot_tile_with_as_many_kernel_rows_as_groups_of_16_k(target):
    """Before: wrong outputs. Alone in its program, the layer's constants reach the assembly
    tile: three kernel rows and three 16-k groups per row, which GCC gave one register while
    the rows' count was a "+r" operand (not early-clobber), so counting the rows down cut the
    groups of the next row."""
    g = int8_layer("Conv2D", (1, 6, 5, 16), (5, 3, 3, 16), seed=9300, pads=(1, 1, 1, 1), gain=60.0)
    res = build(g, target)
    run_and_compare(g, res, target, random_samples(res.manifest["inputs"], 2, seed=5))


@pytest.mark.parametrize("shape, weights, attrs", [
    ((1, 3, 5, 32), (16, 1, 1, 32), {"activation": "relu", "out_zp": -128}),  # the clamp left out
    ((1, 3, 5, 32), (16, 1, 1, 32), {"activation": "relu6", "out_zp": 20}),
    ((1, 2, 7, 8), (8, 1, 1, 8), {"activation": "relu", "out_zp": -128}),
    ((1, 2, 7, 8), (8, 1, 1, 8), {"activation": "relu6", "out_zp": 20}),
])
def test_sdot_pointwise_alone_with_and_without_the_clamp(shape, weights, attrs):
    """Each pointwise assembly loop's output stage, with and without its clamp, in a program of
    its own (its constants reach the assembly), the last pixels as an overlapping group."""
    g = int8_layer("Conv2D", shape, weights, seed=9310, **attrs)
    res = build(g, "cortex-a76")
    run_and_compare(g, res, "cortex-a76", random_samples(res.manifest["inputs"], 2, seed=5))


@pytest.mark.parametrize("shape, weights, attrs", [
    ((1, 12, 1, 40), (1, 5, 1, 40), {"in_zp": -128}),
    ((2, 9, 5, 16), (1, 3, 1, 16), {"strides": (1, 2), "pads": (1, 0, 1, 0), "activation": "relu6"}),
])
def test_depthwise_column_copy_alone(shape, weights, attrs):
    """A k_h x 1 layer's column copy in a program of its own (its constants reach the copy)."""
    g = int8_layer("DepthwiseConv2D", shape, weights, seed=9311, **attrs)
    res = build(g, "cortex-a72")
    assert [dict(c.template_vars)["column_copies"] for c in res.lowered.calls] == [((weights[1],
                                                                                       int("activation" in attrs)),)]
    run_and_compare(g, res, "cortex-a72", random_samples(res.manifest["inputs"], 2, seed=5))


@pytest.mark.parametrize("core, optimize, band_rows", [("cortex-a76", "speed", 8), ("cortex-a76", "ram", 1),
                                                      ("cortex-a72", "speed", 8), ("cortex-a72", "ram", 1)])
def test_banded_convolution_bands_by_the_optimization(core, optimize, band_rows):
    """A padded 3x3 layer (SDOT on the A76, the pairs tile on the A72) copies the input rows
    of up to eight output rows at a time into its band; with --optimize ram, of one (less
    scratch, more copies), and the same outputs either way."""
    g = int8_layer("Conv2D", (1, 12, 16, 16), (16, 3, 3, 16), seed=9301, pads=(1, 1, 1, 1))
    res = build(g, core, optimize=optimize)
    call = next(c for c in res.lowered.calls if c.kernel == "conv2d_s8")
    assert call.params["band_rows"] == band_rows
    assert call.params.get("slide", 1) == 1  # the SDOT layer slides its 3-wide windows
    run_and_compare(g, res, core, random_samples(res.manifest["inputs"], 2, seed=5))


def test_neon_add_and_average_pool_equal_the_reference():
    g, _, _ = merge([int8_add(a, b, act, seed=k) for k, (a, b, act) in enumerate(ADD)] +
                    [int8_average_pool(*case, seed=k, activation="relu" if k % 2 else "none")
                     for k, case in enumerate(POOL)])
    res = build(g, "cortex-a53")
    variants = load_target("cortex-a53").variants
    assert {kernel_variant(k, variants) for k in ("add_bcast_s8", "average_pool2d_s8")} == {"neon"}
    run_and_compare(g, res, "cortex-a53", random_samples(res.manifest["inputs"], 3, seed=6))


def test_neon_add_of_inputs_on_one_scale_equals_the_reference():
    """Inputs of the same scale both rescale by exactly 1/2 (no right shift on either): the
    sixteen-lane Add's third specialised loop; other zero points and a large output scale."""
    b = GraphBuilder("add_same_scale")
    qa, qb = Quant.of(0.04, 25), Quant.of(0.04, -90)
    y = b.node("Add", [b.input("a", "int8", (1, 3, 3, 24), qa), b.input("b", "int8", (1, 3, 3, 24), qb)],
               activation="relu", quant=Quant.of(0.3, -128))
    g = b.output(y).build()
    res = build(g, "cortex-a53")
    call = next(c for c in res.lowered.calls if c.kernel == "add_bcast_s8")
    assert call.params["q.input1_shift"] == call.params["q.input2_shift"] == 0
    run_and_compare(g, res, "cortex-a53", random_samples(res.manifest["inputs"], 3, seed=7))


def test_neon_add_of_extreme_zero_points_equals_the_reference():
    """The sixteen-lane Add with input offsets of 128 and -127 (the int16 products of the
    halved input and of the other one at their widest) and input 2 of the larger scale (the
    halved one), inputs at the ends of int8, a ReLU whose clamp the narrowing already does."""
    b = GraphBuilder("add_extreme_zero_points")
    qa, qb = Quant.of(0.03, -128), Quant.of(0.07, 127)
    y = b.node("Add", [b.input("a", "int8", (1, 2, 3, 37), qa), b.input("b", "int8", (1, 2, 3, 37), qb)],
               activation="relu", quant=Quant.of(0.1, -128))
    g = b.output(y).build()
    res = build(g, "cortex-a53")
    call = next(c for c in res.lowered.calls if c.kernel == "add_bcast_s8")
    assert (call.params["q.input2_multiplier"], call.params["q.input2_shift"]) == (1 << 30, 0)
    feeds = random_samples(res.manifest["inputs"], 3, seed=8)
    rng = np.random.default_rng(9)
    feeds.append({k: rng.choice(np.array([-128, 127], np.int8), v.shape) for k, v in feeds[0].items()})
    run_and_compare(g, res, "cortex-a53", feeds)


def test_weights_of_minus_128_take_the_single_product_path():
    """Two products of -128 * -128 overflow int16: such layers (GEMM and depthwise) add one
    product at a time. All weights and inputs at -128 hit exactly that case."""
    conv = int8_layer("Conv2D", (1, 2, 3, 32), (5, 1, 1, 32), seed=1, in_zp=-128)
    conv.values["w"].data[...] = -128
    fc = int8_layer("FullyConnected", (2, 40), (11, 40), seed=2, w_min=-128)  # gemv: 8 rows, then 3 of 4
    fc.values["w"].data[0, :8] = -128
    dw = int8_layer("DepthwiseConv2D", (1, 4, 4, 16), (1, 3, 3, 16), seed=3, pads=(1, 1, 1, 1), in_zp=-128)
    dw.values["w"].data[...] = -128
    rows = int8_layer("Conv2D", (1, 5, 4, 16), (6, 3, 3, 16), seed=4, pads=(1, 1, 1, 1))  # windows read in place
    rows.values["w"].data[:, 1] = -128
    half = int8_layer("Conv2D", (1, 3, 3, 40), (5, 1, 1, 40), seed=5, in_zp=-128)  # a last group of 8 bytes
    half.values["w"].data[..., 32:] = -128
    g, _, _ = merge([conv, fc, dw, rows, half])
    res = build(g, "cortex-a53")
    assert modes(res) == {NEON_MLA}
    assert [c.params["pairs"] for c in res.lowered.calls if c.kernel == "depthwise_conv2d_s8"] == [False]
    feeds = random_samples(res.manifest["inputs"], 2, seed=3)
    feeds[0] = {k: np.full_like(v, -128) for k, v in feeds[0].items()}
    run_and_compare(g, res, "cortex-a53", feeds)


def test_neon_build_repacks_the_weights():
    """The NEON build carries the weights in 4-row blocks of 16 bytes and one requantization
    table, not the reference's multiplier/shift arrays; -128-free weights pair products."""
    g = int8_layer("Conv2D", (1, 4, 4, 8), (6, 3, 3, 8), seed=1, pads=(1, 1, 1, 1))
    res = build(g, "cortex-a53")
    consts = {c.name: c for c in res.lowered.consts}
    assert not any(n.startswith("multiplier_") or n.startswith("c_w") for n in consts)
    w = next(c for n, c in consts.items() if n.startswith("w_"))
    assert w.dtype == "int8" and w.data.size == 8 * 80  # 6 rows padded to 8, K = 72 padded to 80
    (call,) = res.lowered.calls
    assert call.params["k16"] == 80 and call.params["mode"] == NEON_MLA_PAIRS


@pytest.mark.parametrize("target", ["cortex-a53", "cortex-a55"])
def test_neon_kernels_compile_at_every_optimization_level(target, tmp_path):
    """`--opt-level` may build the kernels at any level: the forced-inline helpers and SDOT's
    lane arguments must compile from -O0 to -Os, with the strict flags."""
    import subprocess

    from codegen.verify.toolchain import STRICT_FLAGS

    g, _, _ = merge([int8_layer("Conv2D", (1, 4, 4, 8), (6, 3, 3, 8), seed=1, pads=(1, 1, 1, 1)),
                     int8_layer("DepthwiseConv2D", (1, 4, 4, 24), (1, 3, 3, 24), seed=2, pads=(1, 1, 1, 1)),
                     int8_layer("FullyConnected", (2, 20), (5, 20), seed=3), int8_add(*ADD[2], seed=4),
                     int8_average_pool(*POOL[1], seed=5, activation="relu")])
    res = build(g, target)
    for fname, text in res.files.items():
        (tmp_path / fname).write_text(text)
    flags = [f for f in load_target(target).cflags if not f.startswith("-O")]
    for level in ("-O0", "-O1", "-O2", "-Os"):
        proc = subprocess.run(["aarch64-linux-gnu-gcc", *flags, level, *STRICT_FLAGS, "-c", "t.c", "-o", "t.o"],
                              cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, f"{level}: {proc.stderr[-2000:]}"


def test_average_pool_float_division_is_the_integer_one():
    """The NEON average pool divides window sums in float (kiln_average_pool2d_s8_avg4): for
    every count up to 300 and every possible sum, and for large counts on random sums, the
    truncated float32 quotient of sum +- count / 2 equals kiln_rounding_avg_s32's."""
    rng = np.random.default_rng(0)
    cases = [(c, np.arange(-128 * c, 127 * c + 1, dtype=np.int64)) for c in range(1, 301)]
    cases += [(c, rng.integers(-128 * c, 127 * c + 1, 200_000)) for c in (1000, 12345, 40000, 65535, 65536)]
    for count, sums in cases:
        a = np.where(sums > 0, sums + count // 2, sums - count // 2)
        want = np.where(a >= 0, a // count, -((-a) // count))  # C's truncating division
        got = np.trunc(a.astype(np.float32) / np.float32(count)).astype(np.int64)
        np.testing.assert_array_equal(got, want, err_msg=f"count {count}")
