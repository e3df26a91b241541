"""templates/kernels/reference/conv_transpose2d_s16.c.j2: TFLM's 16x8 TRANSPOSE_CONV (int16
activations with zero point 0, int8 weights [O][KH][KW][C], int64 bias and sums), gathered per
output instead of TFLM's scatter into an int64 scratch map: the same integer sums, no scratch.
Its block and arguments are those of the 16x8 convolution (conv2d_s16)."""

from __future__ import annotations

from codegen.kernels.reference.conv2d_s16 import FIXEDPOINT_HEADERS, Conv2dS16, int16_linear_call
from codegen.kernels.spec import KernelSpec, kernel_spec


@kernel_spec
class ConvTranspose2dS16Reference(KernelSpec):
    kernel, variant, Params, headers = "conv_transpose2d_s16", "reference", Conv2dS16, FIXEDPOINT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        return int16_linear_call(cls, request, ctx, request.params["out_c"])
