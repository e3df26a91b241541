"""Winograd F(2x2, 3x3) for the NEON float32 convolution (templates/kernels/neon/_winograd_f32.c.j2,
called from conv2d_f32.c.j2 when the parameter block's `winograd` is set).

A 3x3, stride 1, dilation 1 layer computes each 2x2 block of output pixels (a *tile*) from the
4x4 input patch under it: V = B^T d B per input channel, then for each of the 16 positions xi
of the 4x4 transform domain one product over the input channels, M[xi] = V[xi] U[xi] (a GEMM
of the tiles' rows by the transformed weights), then Y = A^T M A per output channel. 16
multiplies per tile and channel pair instead of 36: the GEMMs run on the register tile of
templates/kernels/neon/_gemm_f32.c.j2, 4 tiles at a time, while the transforms are additions
vectorised over channels.

The weights are transformed here, U[xi] = G g G^T (in float64, rounded once to float32), and
laid out as one set of GEMM panels per xi (repack_f32.gemm_panels). The bias goes into the
panels of xi = (1, 1), the one position A^T M A adds with weight 1 to all four outputs, so the
GEMM's own bias load adds it. The transforms' additions and the weights' rounding move the
result by a few float32 ULPs of the layer's magnitude, inside codegen/verify/compare.py's
float tolerance.

Whether a layer takes it is a comparison of instruction estimates (`winograd_wins`): the
transforms cost per channel what the saved multiplies gain per channel pair, so layers with few
input channels (an RGB stem) stay on the direct path.
"""

from __future__ import annotations

import numpy as np

from codegen.kernels.repack_f32 import block_widths, gemm_panels

# F(2x2, 3x3): the weight (G), input (B^T) and output (A^T) transforms (Lavin and Gray, 2015)
G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
B_T = np.array([[1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, -1.0, 1.0, 0.0], [0.0, 1.0, 0.0, -1.0]])
A_T = np.array([[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, -1.0, -1.0]])
POSITIONS = 16  # of the 4x4 transform domain
BIAS_POSITION = (1, 1)  # A^T's column 1 is all ones: M[1][1] reaches every output with weight 1
TILE_ROWS = 4  # tiles per GEMM row tile


def fits(shape) -> bool:
    """Whether the layer is one Winograd F(2x2, 3x3) computes: a 3x3 window at stride 1,
    undilated (any padding, any size)."""
    return (shape["k_h"] == 3 and shape["k_w"] == 3 and shape["stride_h"] == 1 and shape["stride_w"] == 1
            and shape["dilation_h"] == 1 and shape["dilation_w"] == 1)


def winograd_panels(weights: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """OHWI [O, 3, 3, I] float weights and their [O] bias as 16 sets of GEMM panels, xi = 4a + b
    in order, each of the [O, I] matrix U[a][b] = (G g G^T)[a][b]; the bias in xi = (1, 1)'s."""
    u = np.einsum("ak,okli,bl->aboi", G, weights.astype(np.float64), G)
    zeros = np.zeros(weights.shape[0], np.float32)
    return np.concatenate([gemm_panels(u[a, b].astype(np.float32), bias if (a, b) == BIAS_POSITION else zeros)
                           for a in range(4) for b in range(4)])


def scratch_bytes(in_c: int, out_c: int) -> int:
    """The kernel's scratch: the 16 x 4 run pointers of the GEMM rows, a channel vector of
    zeros for the padding, the transformed inputs of 4 tiles (16 x 4 rows of in_c rounded up
    to 4) and the GEMMs' results (16 x 4 rows of out_c, plus a vector read past the last)."""
    in_c4 = -(-in_c // 4) * 4
    return 8 * POSITIONS * TILE_ROWS + 4 * (in_c4 + POSITIONS * TILE_ROWS * in_c4 + POSITIONS * TILE_ROWS * out_c + 4)


# Instruction estimates of the two paths: the GEMM tile's loop (per step of k and 4 rows: one
# FMLA per 4 output channels, weight loads and the runs' overhead per block of 16, an input load),
# the fixed costs per GEMM call, per tile and per channel vector of the transforms; fitted to
# `kiln profile` counts on cortex-a72 of both paths on ResNet-8's 3x3 layers (3 to 64 channels,
# 32x32 to 8x8), within 10% of each (the direct path's RGB stem: 15% under).
_GEMM_CALL = 60  # a 4-row tile's bias loads, clamp and stores per block
_BLOCK_STEP = 2.5  # per step of k and block of 16 channels: its weight load, the runs' overhead
_DIRECT_TILE = 150  # the direct path's table of runs for 4 pixels
_TILE = 200  # a tile's patch pointers, output pixels, its share of a group's GEMM calls
_TRANSFORM_VECTOR = 65  # a tile's input or output transform per 4 channels
_CHANNEL_TAIL = 300  # a tile's last 1 to 3 input channels copied to a vector
# a last block of 4 or 12 channels runs on the C tile (not the assembly of 16 or 8): per call, per k
_C_TILE_CALL, _C_TILE_STEP = 120, 1.5


def _gemm_steps(depth: int, out_c: int) -> float:
    """Instructions of the 4-row GEMM tiles over all output channels for `depth` steps of k."""
    vectors = -(-out_c // 4)
    blocks = -(-out_c // 16)
    c_tile = block_widths(out_c)[-1] in (4, 12)
    return (depth * (vectors * 4 + blocks * _BLOCK_STEP + 1) + blocks * _GEMM_CALL
            + c_tile * (_C_TILE_CALL + depth * _C_TILE_STEP))


def direct_cost(shape) -> float:
    pixels = shape["batches"] * shape["out_h"] * shape["out_w"]
    depth = shape["k_h"] * shape["k_w"] * shape["in_c"]
    return pixels / 4 * (_DIRECT_TILE + _gemm_steps(depth, shape["out_c"]))


def winograd_cost(shape) -> float:
    tiles = shape["batches"] * -(-shape["out_h"] // 2) * -(-shape["out_w"] // 2)
    in_vectors, out_vectors = -(-shape["in_c"] // 4), -(-shape["out_c"] // 4)
    return (tiles / TILE_ROWS * POSITIONS * _gemm_steps(shape["in_c"], shape["out_c"])
            + tiles * (_TILE + (in_vectors + out_vectors) * _TRANSFORM_VECTOR
                       + (_CHANNEL_TAIL if shape["in_c"] % 4 else 0)))


def winograd_wins(shape) -> bool:
    """Whether the layer fits Winograd and its estimate is below the direct path's."""
    return fits(shape) and winograd_cost(shape) < direct_cost(shape)


def overlap_shift(p: dict) -> int:
    """The least offset(input) - offset(output), in bytes, at which the kernel never overwrites
    input it has still to read (as inplace.conv_overlap_shift for the direct kernels): it
    reads the patches of a group of 4 tiles (flattened over batch, tile rows and columns)
    before it writes any of their pixels, so a group's last pixel must end at or below the
    first input pixel a later group reads."""
    tiles_h, tiles_w = -(-p["out_h"] // 2), -(-p["out_w"] // 2)
    n, ty, tx = (a.reshape(-1) for a in np.meshgrid(np.arange(p["batches"]), np.arange(tiles_h),
                                                    np.arange(tiles_w), indexing="ij"))
    # the tile's first input pixel read (its patch's top-left pixel inside the image)
    first = (n * p["in_h"] + np.maximum(2 * ty - p["pad_top"], 0)) * p["in_w"] + np.maximum(2 * tx - p["pad_left"], 0)
    # one past the tile's last output pixel (its bottom-right one inside the output)
    end = (n * p["out_h"] + np.minimum(2 * ty + 1, p["out_h"] - 1)) * p["out_w"] + np.minimum(2 * tx + 1, p["out_w"] - 1) + 1
    groups = -(-first.size // TILE_ROWS)
    written = np.array([end[g * TILE_ROWS:(g + 1) * TILE_ROWS].max() for g in range(groups)], np.int64)
    later = np.minimum.accumulate(first[::-1])[::-1]  # the least first pixel of tile t or after
    shifts = [written[g] * p["out_c"] * 4 - later[(g + 1) * TILE_ROWS] * p["in_c"] * 4
              for g in range(groups - 1)]
    return int(max(max(shifts, default=0), 0))
