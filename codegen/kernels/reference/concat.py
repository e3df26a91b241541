"""templates/kernels/reference/concat.c.j2: one input's rows copied into their place in the
output (one call per input), in bytes, whatever the dtype."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class Concat:
    outer: int  # rows: product of the output dimensions before the axis
    chunk: int  # bytes this input contributes to each row
    out_stride: int  # bytes of one output row
    out_offset: int  # byte offset of this input's chunk within a row


typed_kernels(REFERENCE, Concat, "concat")
