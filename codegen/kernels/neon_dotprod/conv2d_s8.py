"""templates/kernels/neon_dotprod/conv2d_s8.c.j2: the SDOT GEMM of runtime_c/kiln_neon_sdot.h,
eight output channels by eight pixels per register tile, the window in quads of four k
(repack.sdot_gemm_blocks with k_multiple 4), read in place where it can be (pointwise layers
whose channels are a multiple of 4; windows inside the image, each kernel row of the weights
zero-padded to whole quads, or to 16 bytes (window_rows), so that the few bytes read past a
window row meet zero weights);
scratch: eight im2col columns of k4 bytes for the others. Pointwise layers of 8 or 16k
channels run their whole groups of eight pixels in the header's pointwise assembly loops."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
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
        row_quads = window_rows(shape)
        if row_quads:
            rows = padded_window_rows(rows, shape["k_h"], 4 * row_quads)
        k4 = repack.round_up(rows.shape[1], 4)
        packed = ctx.constant(request.node, "w", repack.sdot_gemm_blocks(rows, 4), "int8")
        return int8_prepared(cls, request, ctx, p, packed, 4 if direct else COLS * k4, k4=k4, direct=int(direct),
                             row_quads=row_quads, right=shifts_right(p), rq=rq)


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
