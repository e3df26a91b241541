"""templates/kernels/reference/fully_connected_f32.c.j2: rows times weights with the output
channel last when constant (codegen/kernels/repack_f32.reference_weights)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import FloatClamp, RowsShape
from codegen.kernels.repack_f32 import prepare_reference
from codegen.kernels.spec import KernelSpec, kernel_spec


@dataclass(frozen=True)
class FullyConnectedF32(RowsShape, FloatClamp):
    w_oc_stride: int


@kernel_spec
class FullyConnectedF32Reference(KernelSpec):
    kernel, variant, Params = "fully_connected_f32", "reference", FullyConnectedF32

    @classmethod
    def prepare(cls, request, ctx):
        return prepare_reference(cls.Params, request, ctx)
