"""templates/kernels/reference/non_zero.c.j2: ONNX NonZero (codegen/ops/non_zero.py), one kernel
per element width (an element is non-zero when its bits are; float32 compares as float)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import kernel_family
from codegen.ops.non_zero import KERNEL


@dataclass(frozen=True)
class NonZero:
    rank: int  # axes of the input
    size: int  # its elements: the bound of the output's axis 1
    dims: tuple[int, ...]  # its dimensions (1 past rank)
    strides: tuple[int, ...]  # elements between neighbours along each axis (1 past rank)


kernel_family("non_zero", {f"non_zero__{suffix}": {"name": f"non_zero__{suffix}", "T": ctype}
                           for suffix, ctype in KERNEL.values()}, params=NonZero)
