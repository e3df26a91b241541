"""templates/kernels/mve/fully_connected_s8.c.j2: each input row (copied to zero-padded
scratch unless its length is a multiple of 16) against blocks of four output channels."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.linear import MVE_HEADERS, OutputStage, RowsShape, int8_prepared, vector_requant, weights
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class FullyConnectedS8Mve(RowsShape, OutputStage):
    k16: int
    rq: ConstArray


@kernel_spec
class FullyConnectedS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = "fully_connected_s8", "mve", FullyConnectedS8Mve, MVE_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        k16 = repack.round_up(w.shape[1], 16)
        p, rq = vector_requant(request, ctx, w, fc_per_tensor=True)
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", repack.mve_gemm_rows(w), "int8"),
                             4 if k16 == w.shape[1] else k16, k16=k16, rq=rq)
