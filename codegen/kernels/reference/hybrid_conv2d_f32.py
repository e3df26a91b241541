"""templates/kernels/reference/hybrid_conv2d_f32.c.j2: TFLite's hybrid convolution (float32
input and output, int8 weights; codegen/ops/hybrid_conv2d.py). The NEON variants read the
same request and lay out their own block (codegen/kernels/neon/hybrid_conv2d_f32.py)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import ConvShape, FloatClamp
from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class HybridConv2dF32(ConvShape, FloatClamp):
    asymmetric: bool  # input codes: symmetric (zero point 0) or asymmetric
    w_scale: ConstArray  # weight scales: w_scale[oc * w_scale_step]
    w_scale_step: int  # 1 per channel, 0 per tensor (one scale)


typed_kernels(REFERENCE, HybridConv2dF32, "hybrid_conv2d_f32")
