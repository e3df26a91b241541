"""templates/kernels/cortex_m_dsp/fully_connected_s8.c.j2: each input row to int16 scratch
once, then four output channels at a time."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.linear import DSP_HEADERS, OutputStage, RowsShape, dsp_requant, output_stage, weights
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.lower.kernel import ConstArray, ScratchArg


@dataclass(frozen=True)
class FullyConnectedS8Dsp(RowsShape, OutputStage):
    rq_r2: int
    k4: int
    rq: ConstArray


@kernel_spec
class FullyConnectedS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "fully_connected_s8", "cortex_m_dsp", FullyConnectedS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        k4 = repack.round_up(w.shape[1], 4)
        p, r2, rq = dsp_requant(request, ctx, w, repack.round_up(w.shape[0], 4), fc_per_tensor=True)
        args = (ctx.tensor(node.inputs[0]), ctx.constant(node, "w", repack.dsp_gemm_rows(w, block=4), "int32"),
                ctx.tensor(node.outputs[0]), ScratchArg(2 * k4))
        return Prepared(cls.Params(**request.params, **output_stage(p), rq_r2=r2, k4=k4, rq=rq), args, cls.headers)
