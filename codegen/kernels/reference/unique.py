"""templates/kernels/reference/unique.c.j2: ONNX Unique (codegen/ops/unique.py), one kernel per
element C type (a bool compares as uint8)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.ir.types import C_TYPES
from codegen.kernels.spec import kernel_family
from codegen.ops.unique import KERNEL


@dataclass(frozen=True)
class Unique:
    outer: int  # product of the dimensions before the axis (1 without axis)
    depth: int  # the axis: entries compared (all elements without axis)
    inner: int  # product of the dimensions after it (1 without axis)
    sorted: bool  # ascending (else in order of first occurrence)


kernel_family("unique", {name: {"name": name, "T": C_TYPES["uint8" if dtype == "bool" else dtype],
                                "is_float": dtype == "float32"} for dtype, name in KERNEL.items()},
              params=Unique)
