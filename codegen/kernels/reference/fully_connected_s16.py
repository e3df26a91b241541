"""templates/kernels/reference/fully_connected_s16.c.j2: TFLM's 16x8 FullyConnected and
FullyConnectedPerChannel (int16 activations, int8 weights, int64 bias and accumulator)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import OutputStage, RowsShape
from codegen.kernels.reference.conv2d_s16 import FIXEDPOINT_HEADERS, int16_linear_call
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class FullyConnectedS16(RowsShape, OutputStage):
    multiplier: ConstArray
    shift: ConstArray


@kernel_spec
class FullyConnectedS16Reference(KernelSpec):
    kernel, variant, Params, headers = "fully_connected_s16", "reference", FullyConnectedS16, FIXEDPOINT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        return int16_linear_call(cls, request, ctx, request.params["out_c"], fc_per_tensor=True)
