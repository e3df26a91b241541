"""templates/kernels/neon/conv2d_s8.c.j2 (and neon_dotprod's): four pixels' windows (im2col,
or the input itself for a 1x1 unpadded layer, read k16 bytes at a time against the weights'
zero padding, and for windows inside the image whose rows are whole groups of 16 bytes, row by
row in place) against blocks of four output channels (SDOT: eight), in one register tile; the
NEON kernel is inlined at each call, so that each layer's copy has its shape as constants, and
a last group holding at most 8 bytes of the window costs one SMULL per row and column.
Padded layers whose window rows are read in place (banded_layer) run on bands: the input rows
of a few output rows copied once into scratch with their padding, every window then read
there, band_pitch bytes per row, with no window copied on its own at the image's border."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.bands import band_budget, band_input_rows, output_rows_per_band, reaches_padding
from codegen.kernels.linear import (NEON_HEADERS, NEON_MLA, NEON_MLA_PAIRS, NEON_SDOT, ConvShape, OutputStage,
                                    int8_prepared, vector_requant, weights)
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class GemmFields:
    k16: int  # accumulation depth rounded up to a multiple of 16
    mode: int  # NEON_MLA_PAIRS, NEON_MLA or NEON_SDOT (runtime_c/kiln_neon_s8.h)
    rq: ConstArray  # Helium's per-channel vectors
    right: int  # every channel shifts right by 1 or more: kiln_neon_scale4's one-instruction rounding


@dataclass(frozen=True)
class Conv2dS8Neon(ConvShape, OutputStage, GemmFields):
    input_zp: int
    band_pitch: int  # bytes between the band's input rows (banded_layer), or 0
    band_rows: int  # output rows per band


def banded_layer(shape: dict) -> bool:
    """Whether the layer runs on bands: windows whose rows are whole 16-byte groups, read in
    place by rows (not a 1x1 unpadded layer; dilation_w 1), some of them in the padding."""
    if shape["dilation_w"] != 1 or (shape["k_w"] * shape["in_c"]) % 16 != 0:
        return False
    if shape["k_h"] == 1 and shape["k_w"] == 1 and shape["pad_top"] == 0 and shape["pad_left"] == 0:
        return False
    return reaches_padding(shape)


def band_layout(shape: dict, budget: int) -> tuple[int, int]:
    """A banded layer's bytes per band row (the columns its windows reach, padding included,
    rounded up to 16) and output rows per band (bands.output_rows_per_band)."""
    pitch = repack.round_up(((shape["out_w"] - 1) * shape["stride_w"] + shape["k_w"]) * shape["in_c"], 16)
    return pitch, output_rows_per_band(shape, pitch, 0, budget)


def shifts_right(p) -> int:
    """Whether every channel's requantization shifts right (TFLM shift < 0), which lets the
    NEON output stage round negative lanes with one SSRA (runtime_c/kiln_neon_s8.h)."""
    return int((np.asarray(p.shift) < 0).all())


def gemm(request, ctx, rows: np.ndarray, sdot: bool, fc_per_tensor: bool = False):
    """How the register tile multiplies, its weights and the output stage's table: SDOT on
    blocks of eight rows (repack.sdot_gemm_blocks), or SMULL/SMLAL2 on Helium's blocks of four
    rows (16 bytes of each in turn), products summed in int16 pairs unless a weight is -128
    (two products of 128 * 128 overflow int16)."""
    if sdot:
        mode, block, packed = NEON_SDOT, 8, repack.sdot_gemm_blocks(rows)
    else:
        mode = NEON_MLA if (np.asarray(rows) == -128).any() else NEON_MLA_PAIRS
        block, packed = 4, repack.mve_gemm_rows(rows)
    p, rq = vector_requant(request, ctx, rows, fc_per_tensor, block=block)
    fields = {"k16": repack.round_up(rows.shape[1], 16), "mode": mode, "rq": rq, "right": shifts_right(p)}
    return p, fields, ctx.constant(request.node, "w", packed, "int8")


@kernel_spec
class Conv2dS8NeonSpec(KernelSpec):
    kernel, variant, Params, headers = "conv2d_s8", "neon", Conv2dS8Neon, NEON_HEADERS
    sdot = False

    @classmethod
    def prepare(cls, request, ctx):
        w = weights(request, ctx)
        p, fields, packed = gemm(request, ctx, w.reshape(w.shape[0], -1), cls.sdot)
        shape = request.params
        pitch, per_band = band_layout(shape, band_budget(ctx)) if banded_layer(shape) else (0, 0)
        band = band_input_rows(shape, per_band) * pitch if pitch else 0
        return int8_prepared(cls, request, ctx, p, packed, 4 * fields["k16"] + band, band_pitch=pitch,
                             band_rows=per_band, **fields)
