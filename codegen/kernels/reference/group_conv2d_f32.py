"""templates/kernels/reference/group_conv2d_f32.c.j2 and conv_transpose2d_f32.c.j2: float32
convolutions over channel groups (codegen/ops/group_conv2d.py, conv_transpose2d.py); their
arguments input, weights, bias (zeros without one), output."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import FloatClamp, Window
from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class GroupConvF32(Window, FloatClamp):
    in_c: int  # channels of the input and of the output
    out_c: int
    group_in_c: int  # per group
    group_out_c: int


typed_kernels(REFERENCE, GroupConvF32, "group_conv2d_f32", "conv_transpose2d_f32")
