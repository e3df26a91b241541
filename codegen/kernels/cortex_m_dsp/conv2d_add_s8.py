"""templates/kernels/cortex_m_dsp/conv2d_add_s8.c.j2: the DSP convolution with the residual Add
in its epilogue (codegen/kernels/residual.py): each pixel pair's values go to scratch, then the
Add reads them with the residual's into the output, each input's rescaling to the common scale
a look-up in a compile-time table of its 256 values."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.cortex_m_dsp.conv2d_s8 import Conv2dS8Dsp, Conv2dS8DspSpec, template_paths
from codegen.kernels.cortex_m_dsp.paths import claim_paths
from codegen.kernels.inplace import allow_pair_conv_overlap
from codegen.kernels.reference.families import AddQ
from codegen.kernels.residual import RESIDUAL_HEADERS, allow_over_residual, prepare_fused
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class Conv2dAddS8Dsp(Conv2dS8Dsp):
    q: AddQ  # kiln_add_params of the residual Add, the convolution's value as input 1
    t: ConstArray  # residual.rescale_tables (doubled)
    ep_off: int  # bytes into scratch of the pixel pair's convolution values


@kernel_spec
class Conv2dAddS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = ("conv2d_add_s8", "cortex_m_dsp", Conv2dAddS8Dsp,
                                        Conv2dS8DspSpec.headers + RESIDUAL_HEADERS)

    @classmethod
    def prepare(cls, request, ctx):
        pair = 2 * int(request.params["out_c"])  # a pixel pair's convolution values
        return prepare_fused(Conv2dS8DspSpec, cls.Params, request, ctx, doubled=True, extra_scratch=pair)

    @classmethod
    def declare(cls, call, ctx):
        allow_pair_conv_overlap(ctx, call)  # a pair written after the convolution's values are made
        allow_over_residual(ctx, call)
        claim_paths(ctx, call, template_paths(call.params) | ({"small"} if ctx.optimize == "size" else set()))
