"""templates/kernels/cortex_m_dsp/fully_connected_s8.c.j2: four output channels at a time,
over int16 weights in flash and the int8 input read in place (the default), or over int8
weights against each input row widened to int16 scratch once, or read in place where that
copy would outgrow the layer's own activations (--optimize size)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.paths import claim_paths
from codegen.kernels.linear import DSP_HEADERS, OutputStage, RowsShape, dsp_requant, int8_prepared, weights
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class FullyConnectedS8Dsp(RowsShape, OutputStage):
    rq_r2: int
    k4: int
    widen: int  # 1: rows widened to an int16 scratch copy; 0: read in place, no scratch
    wide: int  # 1: int16 weights (wide_weights); the rows are then read in place
    rq: ConstArray


def wide_weights(optimize: str) -> bool:
    """Whether a fully connected layer keeps its weights as int16 in flash: each group of four
    inputs then costs one LDR, two SXTB16, two LDM and eight SMLAD for four rows (0.875
    instructions per multiply-accumulate with the loop) instead of 1.44 over bytes read in
    place, for twice the weights' flash (AD: 264 KB more, 387,503 -> 270,070 instructions on
    the M4, CMSIS-NN 582,949). A byte buys far less here than the convolution asks of its wide
    weights (conv2d_s8.WIDE_MIN_PIXELS: one use per input row, not per output pixel), but
    these layers are all of AD's and an MLP's work, and they stay above half of CMSIS-NN's
    instructions over bytes; --optimize size keeps the bytes."""
    return optimize != "size"


def wide_rows(rows: np.ndarray) -> np.ndarray:
    """[O, K] int8 weights as the words of the wide 4x1 loop: K zero-padded to a multiple of 4
    and O to a multiple of 4; for each block of four rows and each group of four weights, each
    row's words (w[4g], w[4g+2]) then (w[4g+1], w[4g+3]), int16 lanes low first, so that SMLAD
    meets the lanes SXTB16 and SXTB16 ROR #8 make of four input bytes."""
    o, k = rows.shape
    k4, o4 = repack.round_up(k, 4), repack.round_up(o, 4)
    padded = np.zeros((o4, k4), np.int16)
    padded[:o, :k] = rows
    lanes = padded.reshape(o4 // 4, 4, k4 // 4, 4)[:, :, :, [0, 2, 1, 3]].transpose(0, 2, 1, 3)
    return np.ascontiguousarray(lanes).astype("<i2").view("<i4").astype(np.int32).reshape(-1)


@kernel_spec
class FullyConnectedS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "fully_connected_s8", "cortex_m_dsp", FullyConnectedS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        shape = request.params
        k4 = repack.round_up(w.shape[1], 4)
        wide = wide_weights(ctx.optimize)
        # The int16 copy of a row saves two SXTB16 per group of four inputs and output block
        # (about 9 % of the layer), but is scratch live beside the input and output: taken
        # only where it is no larger than they are together, so that it never more than
        # doubles the layer's footprint (AD's 640-input layer reads in place: 128 B, not 1,408).
        activations = shape["batches"] * (shape["in_k"] + shape["out_c"])
        widen = int(not wide and 2 * k4 <= activations)
        p, r2, rq = dsp_requant(request, ctx, w, repack.round_up(w.shape[0], 4), fc_per_tensor=True)
        packed = wide_rows(w) if wide else repack.dsp_gemm_rows(w, block=4, natural=not widen)
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", packed, "int32"),
                             2 * k4 if widen else 4, rq_r2=r2, k4=k4, widen=widen, wide=int(wide), rq=rq)

    @classmethod
    def declare(cls, call, ctx):
        params = call.params
        claim_paths(ctx, call, {"wide" if params["wide"] else "widen" if params["widen"] else "narrow"})
