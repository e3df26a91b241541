"""templates/kernels/reference/broadcast_args.c.j2: codegen/ops/broadcast_args.py, one kernel
per shape type (broadcast_args_i32, broadcast_args_i64)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.ir.types import C_SUFFIX, C_TYPES
from codegen.kernels.spec import kernel_family
from codegen.ops.broadcast_args import DTYPES


@dataclass(frozen=True)
class BroadcastArgs:
    a_size: int  # dimensions of the first shape
    b_size: int  # dimensions of the second; the output has the larger count


kernel_family("broadcast_args", {f"broadcast_args_{C_SUFFIX[d]}": {"function": f"broadcast_args_{C_SUFFIX[d]}",
                                                                     "T": C_TYPES[d]} for d in DTYPES},
              params=BroadcastArgs, doc="TFLite BROADCAST_ARGS of shapes computed at run time")
