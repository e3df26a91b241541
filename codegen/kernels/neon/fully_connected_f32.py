"""templates/kernels/neon/fully_connected_f32.c.j2: four input rows at a time against packed
weight panels (codegen/kernels/repack_f32.gemm_panels)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import FloatClamp, RowsShape
from codegen.kernels.neon.conv2d_f32 import GEMM_HEADER, panels
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec


@dataclass(frozen=True)
class FullyConnectedF32Neon(RowsShape, FloatClamp):
    pass


@kernel_spec
class FullyConnectedF32NeonSpec(KernelSpec):
    kernel, variant, Params = "fully_connected_f32", "neon", FullyConnectedF32Neon

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        packed, _ = panels(request, ctx)
        return Prepared(cls.Params(**request.params),
                        (ctx.tensor(node.inputs[0]), packed, ctx.tensor(node.outputs[0])),
                        (*request.headers, GEMM_HEADER))
