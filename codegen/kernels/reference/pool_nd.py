"""templates/kernels/reference/{max,lp,average}_pool_nd_f32.c.j2 and max_pool_nd_indices_f32:
ONNX pooling over 1 to 3 spatial axes of NCHW (codegen/ops/pool_nd.py), each axis's sizes
padded to three with the neutral size."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class PoolNd:
    nc: int  # batch x channels
    in_: tuple[int, ...]  # input spatial sizes (missing axes 1); C `in` (a Python keyword)
    out: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    begin: tuple[int, ...]  # the window of output o starts at input o * stride - begin
    limit: tuple[int, ...]  # positions with input + begin < limit lie in the input or its pads


@dataclass(frozen=True)
class MaxPoolNdIndices(PoolNd):
    index_step: tuple[int, ...]  # index weight of each spatial axis (row- or column-major)


@dataclass(frozen=True)
class LpPoolNd(PoolNd):
    p: float  # the norm's exponent


@dataclass(frozen=True)
class AveragePoolNd(PoolNd):
    count_include_pad: bool


typed_kernels(REFERENCE, PoolNd, "max_pool_nd_f32")
typed_kernels(REFERENCE, MaxPoolNdIndices, "max_pool_nd_indices_f32")
typed_kernels(REFERENCE, LpPoolNd, "lp_pool_nd_f32", headers=("math.h",))
typed_kernels(REFERENCE, AveragePoolNd, "average_pool_nd_f32")
