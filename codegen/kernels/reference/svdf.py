"""templates/kernels/reference/svdf_f32.c.j2 and svdf_s8.c.j2: TFLite Micro's SVDF
(codegen/ops/svdf.py). The op lays out the fields; the specs type them (TypedSpec)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import TypedSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class SvdfShape:
    batch: int
    input: int
    filters: int
    memory: int
    rank: int
    units: int
    weights_feature: ConstArray  # [filters][input]
    weights_time: ConstArray  # [filters][memory]
    bias: ConstArray  # [units], zeros when the model has none


@dataclass(frozen=True)
class SvdfF32(SvdfShape):
    act_min: float
    act_max: float


@dataclass(frozen=True)
class SvdfS8(SvdfShape):
    input_zero_point: int
    state_zero_point: int
    output_zero_point: int
    feature_multiplier: int  # input scale * feature scale / state scale
    feature_shift: int
    output_multiplier: int  # state scale * time scale / output scale
    output_shift: int


@kernel_spec
class SvdfF32Reference(TypedSpec):
    kernel, variant, Params = "svdf_f32", "reference", SvdfF32


@kernel_spec
class SvdfS8Reference(TypedSpec):
    kernel, variant, Params = "svdf_s8", "reference", SvdfS8
