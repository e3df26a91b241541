"""ArgMax: the index of the largest element along `axis` (ONNX ArgMax, TFLite ARG_MAX);
float32 in, int64 out. The shared kernel arg_reduce_f32 (see arg_reduce)."""

from __future__ import annotations

from codegen.ops.arg_reduce import ArgReduceOp
from codegen.ops.registry import register


@register
class ArgMax(ArgReduceOp):
    name = "ArgMax"
    is_max = True
