"""templates/kernels/reference/conv2d_add_s8.c.j2: the reference convolution with the residual
Add in its epilogue (codegen/kernels/residual.py)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.reference.conv2d_s8 import Conv2dS8, Conv2dS8Reference
from codegen.kernels.reference.families import AddQ
from codegen.kernels.residual import RESIDUAL_HEADERS, allow_over_residual, prepare_fused
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class Conv2dAddS8(Conv2dS8):
    q: AddQ  # kiln_add_params of the residual Add, the convolution's value as input 1
    t: ConstArray  # residual.rescale_tables: input 1's 256 values at the common scale, then input 2's


@kernel_spec
class Conv2dAddS8Reference(KernelSpec):
    kernel, variant, Params, headers = "conv2d_add_s8", "reference", Conv2dAddS8, RESIDUAL_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        return prepare_fused(Conv2dS8Reference, cls.Params, request, ctx)

    @classmethod
    def declare(cls, call, ctx):
        Conv2dS8Reference.declare(call, ctx)  # it writes where and when the convolution writes
        allow_over_residual(ctx, call)
