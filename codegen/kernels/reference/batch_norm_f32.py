"""templates/kernels/reference/batch_norm_f32.c.j2: inference BatchNorm folded into one
multiply-add per channel (codegen/ops/batch_norm.py fold)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class BatchNormF32:
    outer: int  # product of the dimensions before the channel axis
    channels: int
    inner: int  # product of the dimensions after it (1 for NHWC)
    mul: ConstArray  # per channel: scale / sqrt(var + epsilon)
    add: ConstArray  # per channel: bias - mean * mul


typed_kernels(REFERENCE, BatchNormF32, "batch_norm_f32")
