"""templates/kernels/reference/conv2d_f32.c.j2: the float convolution, constant weights with the
output channel last (codegen/kernels/repack_f32.reference_weights)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.inplace import allow_conv_overlap
from codegen.kernels.linear import ConvShape, FloatClamp
from codegen.kernels.repack_f32 import prepare_reference
from codegen.kernels.spec import KernelSpec, kernel_spec


@dataclass(frozen=True)
class Conv2dF32(ConvShape, FloatClamp):
    w_oc_stride: int  # between output channels in the weights: 1 (HWIO constants) or K (computed OHWI)


@kernel_spec
class Conv2dF32Reference(KernelSpec):
    kernel, variant, Params = "conv2d_f32", "reference", Conv2dF32

    @classmethod
    def prepare(cls, request, ctx):
        return prepare_reference(cls.Params, request, ctx)

    @classmethod
    def declare(cls, call, ctx):
        allow_conv_overlap(ctx, call, itemsize=4)
