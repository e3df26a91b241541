"""templates/kernels/reference/deform_conv2d_f32.c.j2: ONNX DeformConv over NCHW
(codegen/ops/deform_conv2d.py); its arguments the node's inputs, then its output."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class DeformConv2dF32:
    batch: int
    channels: int
    height: int
    width: int
    out_channels: int
    kernel_h: int
    kernel_w: int
    out_h: int
    out_w: int
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_top: int
    pad_left: int
    group: int
    offset_group: int


typed_kernels(REFERENCE, DeformConv2dF32, "deform_conv2d_f32")
