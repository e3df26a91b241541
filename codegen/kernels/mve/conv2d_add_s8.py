"""templates/kernels/mve/conv2d_add_s8.c.j2: the Helium convolution with the residual Add in
its epilogue (codegen/kernels/residual.py): the convolution's outputs written as the plain
kernel writes them, then the Add over them in place, four lanes at a time, each input's
rescaling to the common scale gathered from a compile-time table of its 256 values."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.mve.conv2d_s8 import Conv2dS8Mve, Conv2dS8MveSpec
from codegen.kernels.reference.families import AddQ
from codegen.kernels.residual import RESIDUAL_HEADERS, prepare_fused
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class Conv2dAddS8Mve(Conv2dS8Mve):
    q: AddQ  # kiln_add_params of the residual Add, the convolution's value as input 1
    t: ConstArray  # residual.rescale_tables: input 1's 256 values at the common scale, then input 2's


@kernel_spec
class Conv2dAddS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = ("conv2d_add_s8", "mve", Conv2dAddS8Mve,
                                        Conv2dS8MveSpec.headers + RESIDUAL_HEADERS)

    @classmethod
    def prepare(cls, request, ctx):
        prepared = prepare_fused(Conv2dS8MveSpec, cls.Params, request, ctx)
        # the epilogue's requantization is kiln_mbqm's for a right shift only; the fusion
        # planner offers this kernel no other Add (codegen/fusion/residual.py)
        assert prepared.params.q.output_shift <= 0, "conv2d_add_s8 (mve): the Add's output shift is positive"
        return prepared

    @classmethod
    def declare(cls, call, ctx):
        # the convolution writes where and when the plain kernel writes; the Add runs after
        # all of it, so the output never lies over the residual (allow_over_residual)
        Conv2dS8MveSpec.declare(call, ctx)
