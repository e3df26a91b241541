"""templates/kernels/reference/matmul_s8.c.j2 and matmul_s16.c.j2: TFLM's int8 and int16
BatchMatMul over broadcast batch loops (both operands are activations: int8 zero points are
applied per product, nothing is folded into a bias; int16 ones are 0, the sums int64)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.reference.matmul_f32 import MatmulF32
from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class MatmulS8(MatmulF32):
    a_offset: int  # -zero point of a (TFLM's input_offset)
    b_offset: int  # -zero point of b (TFLM's weights_offset)
    out_offset: int  # zero point of the output
    multiplier: int  # a_scale * b_scale / out_scale as TFLM's QuantizeMultiplier gives it
    shift: int


typed_kernels(REFERENCE, MatmulS8, "matmul_s8", headers=("kiln_quant.h",))


@dataclass(frozen=True)
class MatmulS16(MatmulF32):
    multiplier: int  # a_scale * b_scale / out_scale as TFLM's QuantizeMultiplier gives it
    shift: int


typed_kernels(REFERENCE, MatmulS16, "matmul_s16", headers=("kiln_fixedpoint.h",))
