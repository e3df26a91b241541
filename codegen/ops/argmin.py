"""ArgMin: the index of the smallest element along `axis` (ONNX ArgMin, TFLite ARG_MIN);
float32 in, int64 out. The shared kernel arg_reduce_f32 (see arg_reduce)."""

from __future__ import annotations

from codegen.ops.arg_reduce import ArgReduceOp
from codegen.ops.registry import register


@register
class ArgMin(ArgReduceOp):
    name = "ArgMin"
    is_max = False
