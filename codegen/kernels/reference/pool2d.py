"""templates/kernels/reference/{max,average}_pool2d_{f32,s8,s16}.c.j2 (the loop of _pool2d.c.j2):
one parameter block, the pooling window over NHWC and the fused activation's clamp (float, or
int8 in the output's quantization)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class Pool2d:
    batches: int
    in_h: int
    in_w: int
    channels: int
    out_h: int
    out_w: int
    kernel_h: int
    kernel_w: int
    stride_h: int
    stride_w: int
    pad_top: int  # padding before the first row / column (windows are clipped to the input)
    pad_left: int
    act_min: int | float  # fused activation clamp (int8, int16: quantized)
    act_max: int | float


typed_kernels(REFERENCE, Pool2d, "max_pool2d_f32", "max_pool2d_s8", "max_pool2d_s16", "average_pool2d_f32",
              "average_pool2d_s8", "average_pool2d_s16")
