"""templates/kernels/reference/dynamic_update_slice.c.j2 (codegen/ops/dynamic_update_slice.py)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import TypedSpec, kernel_spec


@dataclass(frozen=True)
class DynamicUpdateSliceParams:
    rank: int
    element_bytes: int
    dims: tuple[int, ...]  # operand shape, left-padded with 1 to MAX_RANK axes
    update_dims: tuple[int, ...]
    index_int64: bool  # start indices are int64 (else int32)


@kernel_spec
class DynamicUpdateSliceReference(TypedSpec):
    kernel, variant, Params = "dynamic_update_slice", "reference", DynamicUpdateSliceParams
