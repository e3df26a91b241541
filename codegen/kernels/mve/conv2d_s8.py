"""templates/kernels/mve/conv2d_s8.c.j2: windows as int8 columns, four output channels per
VMLADAVA.S8 block, two pixels at a time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.paths import claim_paths
from codegen.kernels.inplace import allow_conv_overlap
from codegen.kernels.linear import MVE_HEADERS, ConvShape, OutputStage, int8_prepared, vector_requant, weights
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class Conv2dS8Mve(ConvShape, OutputStage):
    input_zp: int
    k16: int  # window length rounded up to a multiple of 16
    rq: ConstArray  # Helium's per-channel vectors (codegen/kernels/repack.mve_requant)
    copy_pairs: int  # pairs of windows copied to scratch before one sweep (copy_pairs())
    col_row: int  # bytes of a window row in a column and in the packed weights (window_row())


# Scratch for the copied windows of one sweep: several pairs share the sweep's setup (about
# a hundred instructions a pair with one pair a sweep) at a few hundred bytes of RAM; less
# for a pointwise layer, whose copies are short and whose scratch sits at the peak of the
# small models' plans (KWS, streaming wake word).
COPY_BYTES = 1152
POINTWISE_COPY_BYTES = 256


# Rows padded to whole vectors cost their padding's multiply-accumulates in every window and
# save the copy of every window inside the image: worth it up to a quarter more (a small
# U-Net's 3x3 layer of 8 channels, 96 for 80: 12% fewer instructions; an RGB stem, 48 for 32: 3% more).
PADDED_ROWS_GROWTH = 1.25


def padded_rows(params: dict, optimize: str) -> bool:
    """Whether the window rows are padded to whole vectors (in the packed weights and the
    copied columns, zero weights against whatever lies past the row) so that the windows
    inside the image are read in place although a row is no whole count of vectors; not with
    --optimize size (whose copies are one tap at a time) nor where channels leave a partial
    block (read in place only by whole blocks)."""
    row = params["k_w"] * params["in_c"]
    padded = params["k_h"] * repack.round_up(row, 16)
    return (optimize != "size" and row_windows(params) and row % 16 != 0 and params["out_c"] % 4 == 0
            and padded <= PADDED_ROWS_GROWTH * repack.round_up(params["k_h"] * row, 16))


def window_row(params: dict, optimize: str) -> int:
    """The bytes of a window row in a column and in the packed weights: k_w * in_c, rounded up
    to whole vectors where the rows are padded."""
    row = params["k_w"] * params["in_c"]
    return repack.round_up(row, 16) if padded_rows(params, optimize) else row


def call_k16(params: dict, optimize: str = "speed") -> int:
    """The window length of a call's parameter block rounded up to whole vectors."""
    return repack.round_up(params["k_h"] * window_row(params, optimize), 16)


def copy_pairs(params: dict, optimize: str) -> int:
    """Pairs of windows the kernel copies before one assembly sweep over them: as many as fit
    in COPY_BYTES (POINTWISE_COPY_BYTES), at most eight; one with --optimize size (no
    assembly sweep) or a window longer than half of those bytes."""
    if optimize == "size":
        return 1
    budget = POINTWISE_COPY_BYTES if pointwise(params) else COPY_BYTES
    return max(1, min(8, budget // (2 * call_k16(params, optimize))))


def row_windows(params: dict) -> bool:
    """Whether the kernel copies the windows inside the image a row at a time
    (kiln_conv2d_s8_short_rows): contiguous rows, not a pointwise layer of the input's size."""
    return params["dilation_w"] == 1 and not pointwise(params)


def short_rows(params: dict) -> bool:
    """Whether those rows are of at most 16 bytes (an RGB stem's), each a whole-vector store
    that may reach 16 bytes past the last column."""
    return row_windows(params) and params["k_w"] * params["in_c"] <= 16


def rows_in_place(params: dict, optimize: str = "speed") -> bool:
    """Whether the kernel may read the windows inside the image in place, row by row
    (kiln_conv2d_s8_blocks_rows; where the output does not overlap the input and the output
    channels fill blocks of four, the kernel decides at run time): rows of whole vectors,
    or padded to them."""
    return row_windows(params) and window_row(params, optimize) % 16 == 0


def pointwise(params: dict) -> bool:
    """A 1x1 layer of the input's size: its windows are the input's pixels."""
    return (params["k_h"] == 1 and params["k_w"] == 1 and params["stride_h"] == 1 and params["stride_w"] == 1
            and params["pad_top"] == 0 and params["pad_left"] == 0 and params["out_h"] == params["in_h"]
            and params["out_w"] == params["in_w"])


def general_shifts(params: dict) -> bool:
    """Whether a whole block of four output channels has a left shift or a right shift of 0:
    the assembly's output stage then shifts left and masks the rounding fix-up by the right
    shift ("shifts"), which a convolution's multipliers below one half (shifts <= -1) need not."""
    lanes = repack.mve_requant_fields(params["rq"].data, 4 * (params["out_c"] // 4))  # whole blocks
    return bool(lanes[:, 2].any() or not lanes[:, 3].all())


def template_paths(params: dict, optimize: str) -> set[str]:
    """The template's paths a call takes (codegen/kernels/cortex_m_dsp/paths.py): the copying
    path always (a plan may overlap any layer's output with its input), the direct one for a
    1x1 layer of the input's size, the row copies for windows whose rows are contiguous
    ("short"), and the windows of rows of whole vectors read in place ("rows", or "rows3"
    for three rows, unrolled), but with --optimize size, which copies every layer's columns
    (one copy of the inner loop) one tap at a time ("small")."""
    if optimize == "size":
        return {"small"}
    if pointwise(params):
        return {"direct"}
    if rows_in_place(params, optimize):
        return {"short", "rows3" if params["k_h"] == 3 else "rows"}
    return {"short"} if row_windows(params) else set()


@kernel_spec
class Conv2dS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = "conv2d_s8", "mve", Conv2dS8Mve, MVE_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w, params = request.node, weights(request, ctx), request.params
        rows = w.reshape(w.shape[0], -1)
        col_row = window_row(params, ctx.optimize)
        window_rows = w.reshape(w.shape[0], w.shape[1], -1)  # [O, k_h, k_w * in_c]
        packed = np.pad(window_rows, ((0, 0), (0, 0), (0, col_row - window_rows.shape[2]))).reshape(w.shape[0], -1)
        k16 = call_k16(params, ctx.optimize)
        p, rq = vector_requant(request, ctx, rows)
        pairs = copy_pairs(params, ctx.optimize)
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", repack.mve_gemm_rows(packed), "int8"),
                             2 * k16 * pairs + (16 if short_rows(params) else 0), k16=k16, rq=rq,
                             copy_pairs=pairs, col_row=col_row)

    @classmethod
    def declare(cls, call, ctx):
        # an overlapped pointwise layer leaves the direct path for the copying one (template)
        # unless its input lies far enough above its output
        p = call.params
        tile = 2 * copy_pairs(p, ctx.optimize)  # pixels whose windows are copied before any is written
        if p["batches"] == 1 or (p["out_h"] * p["out_w"]) % tile == 0:
            allow_conv_overlap(ctx, call, itemsize=1, tile=tile, reads_first=True)
        claim_paths(ctx, call, template_paths(call.params, ctx.optimize) | ({"shifts"} if general_shifts(p) else set()))
