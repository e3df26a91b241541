"""templates/kernels/onnxruntime/fully_connected_s8.c.j2: onnxruntime's QGemm / QLinearMatMul
with constant weights (the integer product, MlasRequantizeOutput)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import OutputStage, RowsShape, weights
from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT, ort_linear_prepared
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class FullyConnectedS8Ort(RowsShape, OutputStage):
    scale: ConstArray  # float32 per output channel


@kernel_spec
class FullyConnectedS8Onnxruntime(KernelSpec):
    kernel, variant, Params, headers = "fully_connected_s8", VARIANT, FullyConnectedS8Ort, ORT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        return ort_linear_prepared(cls, request, ctx, weights(request, ctx))
