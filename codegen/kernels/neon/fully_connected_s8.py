"""templates/kernels/neon/fully_connected_s8.c.j2 (and neon_dotprod's): four input rows at a
time (copied to zero-padded scratch unless their length is a multiple of 16) against blocks
of four output channels (SDOT: eight)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import NEON_HEADERS, OutputStage, RowsShape, int8_prepared, weights
from codegen.kernels.neon.conv2d_s8 import GemmFields, gemm
from codegen.kernels.spec import KernelSpec, kernel_spec


@dataclass(frozen=True)
class FullyConnectedS8Neon(RowsShape, OutputStage, GemmFields):
    pass


@kernel_spec
class FullyConnectedS8NeonSpec(KernelSpec):
    kernel, variant, Params = "fully_connected_s8", "neon", FullyConnectedS8Neon
    headers = NEON_HEADERS + ("kiln_neon_gemv.h",)
    sdot = False

    @classmethod
    def prepare(cls, request, ctx):
        w = weights(request, ctx)
        p, fields, packed = gemm(request, ctx, w, cls.sdot, fc_per_tensor=True)
        return int8_prepared(cls, request, ctx, p, packed, 4 if fields["k16"] == w.shape[1] else 4 * fields["k16"],
                             **fields)
