"""templates/kernels/reference/softmax_{f32,s8,strided_s8,s16}.c.j2: the rows around the softmax
axis, beta (float) or TFLM's SoftmaxParams (int8: codegen.quant.softmax_params)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, TypedSpec, kernel_spec, typed_kernels
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class SoftmaxF32:
    outer: int  # product of the dimensions before the axis
    depth: int  # the softmax axis
    inner: int  # product of the dimensions after it: element stride along the axis
    beta: float


@dataclass(frozen=True)
class SoftmaxS8:
    outer: int  # rows
    depth: int  # row length (the last axis)
    input_multiplier: int
    input_left_shift: int
    diff_min: int


@dataclass(frozen=True)
class SoftmaxStridedS8(SoftmaxS8):
    inner: int  # element stride along the axis


@dataclass(frozen=True)
class SoftmaxS16:
    outer: int  # rows
    depth: int  # row length (the last axis)
    input_multiplier: int  # QuantizeMultiplier(s_in * beta / (10 / 65535))
    input_left_shift: int
    exp_lut: ConstArray  # [513] int16: codegen.quant.softmax16.exp_lut
    recip_lut: ConstArray  # [513] int16: 1 / (1 + x)


typed_kernels(REFERENCE, SoftmaxF32, "softmax_f32")
typed_kernels(REFERENCE, SoftmaxS16, "softmax_s16")
typed_kernels(REFERENCE, SoftmaxS8, "softmax_s8")


@kernel_spec
class SoftmaxStridedS8Reference(TypedSpec):
    """Rows along a strided axis: gathered into a scratch row, computed, scattered back."""

    kernel, variant, Params = "softmax_strided_s8", REFERENCE, SoftmaxStridedS8

    @classmethod
    def scratch_bytes(cls, request):
        return 2 * request.params["depth"]  # a row in and a row out
