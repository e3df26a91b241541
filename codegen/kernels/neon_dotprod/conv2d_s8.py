"""templates/kernels/neon_dotprod/conv2d_s8.c.j2: the SDOT GEMM of runtime_c/kiln_neon_sdot.h,
eight output channels by eight pixels per register tile, the window in quads of four k
(repack.sdot_gemm_blocks with k_multiple 4), read in place where it can be (pointwise layers
whose channels are a multiple of 4; windows inside the image, each kernel row of the weights
zero-padded to whole quads, or to 16 bytes (window_rows), so that the few bytes read past a
window row meet zero weights);
scratch: eight im2col columns of k4 bytes for the others. Padded layers whose output rows
hold a whole tile (banded_layer) copy each output row's k_h input rows, padding included,
into a band in scratch first (band_pitch bytes apart), so that no window is copied on its own
at the image's border; a stem of short window rows (compact_windows) then copies its windows
from the band into k4 = whole 16-k groups, not k_h padded rows. Pointwise layers of 8 or 16k
channels run their whole groups of eight pixels in the header's pointwise assembly loops."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.bands import band_budget, band_input_rows, output_rows_per_band, reaches_padding
from codegen.kernels.cortex_m_dsp.paths import claim_paths
from codegen.kernels.linear import NEON_HEADERS, ConvShape, OutputStage, int8_prepared, vector_requant, weights
from codegen.kernels.neon.conv2d_s8 import shifts_right
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray

COLS = 8  # pixels per tile (KILN_SDOT_COLS)


@dataclass(frozen=True)
class Conv2dS8Dotprod(ConvShape, OutputStage):
    input_zp: int
    k4: int  # window length (with row_quads: k_h padded rows) rounded up to a multiple of 4
    direct: int  # 1x1, unpadded, in_c a multiple of 4: the columns are the input pixels
    row_quads: int  # quads per zero-padded window row (rows read in place inside the image), or 0
    right: int  # every channel shifts right by 1 or more (neon/conv2d_s8.shifts_right)
    band_pitch: int  # bytes between the band's rows (banded_layer), or 0
    band_rows: int  # output rows per band
    compact: int  # the band's windows copied into columns of k4 bytes (compact_windows)
    slide: int  # banded 3-wide windows at stride 1 of 16k channels (slides), weights in slide order
    rq: ConstArray


def pointwise_in_place(shape: dict) -> bool:
    """A 1x1 unpadded layer whose pixels are whole quads: the tile reads them where they lie."""
    return (shape["k_h"] == 1 and shape["k_w"] == 1 and shape["pad_top"] == 0 and shape["pad_left"] == 0
            and shape["in_c"] % 4 == 0)


@kernel_spec
class Conv2dS8DotprodSpec(KernelSpec):
    kernel, variant, Params = "conv2d_s8", "neon_dotprod", Conv2dS8Dotprod
    headers = NEON_HEADERS + ("kiln_neon_sdot.h",)

    @classmethod
    def prepare(cls, request, ctx):
        w = weights(request, ctx)
        rows = w.reshape(w.shape[0], -1)
        p, rq = vector_requant(request, ctx, rows, block=8)
        shape = request.params
        direct = pointwise_in_place(shape)
        banded = banded_layer(shape)
        compact = banded and compact_windows(shape)
        row_quads = 0 if compact else window_rows(shape)
        if row_quads:
            rows = padded_window_rows(rows, shape["k_h"], 4 * row_quads)
        k4 = repack.round_up(rows.shape[1], 16 if compact else 4)
        pitch = band_pitch(shape, 16 if compact else 4 * row_quads) if banded else 0
        per_band = output_rows_per_band(shape, pitch, k4 if compact else 0, band_budget(ctx)) if banded else 0
        columns = per_band * shape["out_w"] if compact else COLS  # compact: a whole band's windows
        scratch = 4 if direct else columns * k4 + (16 + band_input_rows(shape, per_band) * pitch if banded else 0)
        blocks = repack.sdot_gemm_blocks(rows, 16 if compact else 4)
        slide = banded and slides(shape)
        if slide:
            blocks = repack.sdot_slide_order(blocks, shape["k_h"], shape["k_w"], shape["in_c"])
        packed = ctx.constant(request.node, "w", blocks, "int8")
        return int8_prepared(cls, request, ctx, p, packed, scratch, k4=k4, direct=int(direct),
                             row_quads=row_quads, right=shifts_right(p), band_pitch=pitch, band_rows=per_band,
                             compact=int(compact), slide=int(slide), rq=rq)

    @classmethod
    def declare(cls, call, ctx):
        # the banded functions only where a layer runs on bands: compiled in, unused, they
        # cost GCC's per-layer clones of the convolution (measured: the KWS stem 40% slower)
        claim_paths(ctx, call, {"banded" if call.params["band_pitch"] else "unbanded"})


def window_rows(shape: dict) -> int:
    """Quads per window row read in place (dilation_w 1), or 0 (im2col). Runs of whole 16-k
    groups take the assembly tile of runtime_c/kiln_neon_sdot.h, so a row is padded to 16
    bytes when that adds at most a third more SDOTs (a 3-channel 3x3 stem: 9 bytes, 12 -> 16);
    else to a quad (the tile's slower tail; an im2col copy of short rows costs more)."""
    if pointwise_in_place(shape) or shape["dilation_w"] != 1:
        return 0
    row = shape["k_w"] * shape["in_c"]
    whole = repack.round_up(row, 16)
    return (whole if 3 * whole <= 4 * repack.round_up(row, 4) else repack.round_up(row, 4)) // 4


def padded_window_rows(rows: np.ndarray, k_h: int, pitch: int) -> np.ndarray:
    """[O, k_h * row] weights with each of the k_h kernel rows zero-padded to `pitch` bytes:
    a window row read in place then takes whole quads, the bytes past its end (the next
    pixels' channels) multiplied by zero."""
    o = rows.shape[0]
    split = rows.reshape(o, k_h, -1)
    return np.pad(split, ((0, 0), (0, 0), (0, pitch - split.shape[2]))).reshape(o, k_h * pitch)


def banded_layer(shape: dict) -> bool:
    """Whether the layer runs on bands (the input rows of a few output rows copied to scratch
    with their padding): windows read in place by rows (dilation_w 1), some in the padding,
    and output rows of at least one whole tile of eight pixels (narrower rows keep the tiles
    that span rows), or windows compacted (a band's windows one run of columns, rows of any
    width: the KWS stem's 10x4 windows over 5-pixel rows)."""
    if pointwise_in_place(shape) or shape["dilation_w"] != 1:
        return False
    if shape["out_w"] < COLS and not compact_windows(shape):
        return False
    return reaches_padding(shape)


def compact_windows(shape: dict) -> bool:
    """Whether a banded layer's windows are copied into whole 16-k groups (one 16-byte copy
    per kernel row, rows of at most 16 bytes) rather than read by rows padded each to their own
    quads or groups: when that saves SDOT work, in the tile's own instructions (per block of
    eight channels and group of 16 k about 76, per quad left over 27, per kernel row 14; per
    copied window row about 2.5), e.g. a 3-channel 3x3 stem, 27 bytes in two groups, not three."""
    row = shape["k_w"] * shape["in_c"]
    if row > 16:
        return False
    quads = window_rows(shape)
    blocks = -(-shape["out_c"] // 8)
    by_rows = blocks * shape["k_h"] * ((quads // 4) * 76 + (quads % 4) * 27 + 14)
    groups = -(-(shape["k_h"] * row) // 16)
    return blocks * (groups * 76 + 14) + COLS * shape["k_h"] * 2.5 < by_rows


def band_pitch(shape: dict, window_read: int) -> int:
    """Bytes per band row: the columns the output row's windows reach, padding included, and
    what the last window reads past them (`window_read` bytes from its start), rounded up
    to 16."""
    reach = ((shape["out_w"] - 1) * shape["stride_w"] + shape["k_w"]) * shape["in_c"]
    last = (shape["out_w"] - 1) * shape["stride_w"] * shape["in_c"] + window_read
    return repack.round_up(max(reach, last), 16)


def slides(shape: dict) -> bool:
    """Whether a banded layer's windows run in kiln_neon_sdot8_slide3: three pixels wide at
    stride 1 over 16k channels, whole groups of eight pixels per output row and of eight
    output channels (the weights' slide order serves no other path)."""
    return (shape["k_w"] == 3 and shape["stride_w"] == 1 and shape["in_c"] % 16 == 0
            and shape["out_w"] % COLS == 0 and shape["out_c"] % 8 == 0)
