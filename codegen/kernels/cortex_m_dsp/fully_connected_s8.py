"""templates/kernels/cortex_m_dsp/fully_connected_s8.c.j2: four output channels at a time,
against each input row widened to int16 scratch once, or read in place where that copy would
outgrow the layer's own activations."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.linear import DSP_HEADERS, OutputStage, RowsShape, dsp_requant, int8_prepared, weights
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class FullyConnectedS8Dsp(RowsShape, OutputStage):
    rq_r2: int
    k4: int
    widen: int  # 1: rows widened to an int16 scratch copy; 0: read in place, no scratch
    rq: ConstArray


@kernel_spec
class FullyConnectedS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "fully_connected_s8", "cortex_m_dsp", FullyConnectedS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        shape = request.params
        k4 = repack.round_up(w.shape[1], 4)
        # The int16 copy of a row saves two SXTB16 per group of four inputs and output block
        # (about 9 % of the layer), but is scratch live beside the input and output: taken
        # only where it is no larger than they are together, so that it never more than
        # doubles the layer's footprint (AD's 640-input layer reads in place: 128 B, not 1,408).
        activations = shape["batches"] * (shape["in_k"] + shape["out_c"])
        widen = int(2 * k4 <= activations)
        p, r2, rq = dsp_requant(request, ctx, w, repack.round_up(w.shape[0], 4), fc_per_tensor=True)
        packed = ctx.constant(node, "w", repack.dsp_gemm_rows(w, block=4, natural=not widen), "int32")
        return int8_prepared(cls, request, ctx, p, packed, 2 * k4 if widen else 4, rq_r2=r2, k4=k4, widen=widen, rq=rq)
