"""QuantizedLogSoftmax: TFLite Micro's int8 LOG_SOFTMAX along the last axis.

Kiln's float LogSoftmax is a chain of float ops (the frontends build it); int8 is TFLM's own
fixed-point kernel (codegen.quant.log_softmax, C mirror runtime_c/kiln_log_softmax.h): the
output quantization is fixed by TFLM at scale 16/256, zero point 127, and the constants come
from the input scale alone.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.common import naming, per_tensor_quants, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.log_softmax import (OUTPUT_SCALE, OUTPUT_ZERO_POINT, LogSoftmaxParams, log_softmax_int8,
                                       log_softmax_params)


def _params(node: Node, g: Graph) -> LogSoftmaxParams:
    qi, qo = per_tensor_quants(node, g)
    if np.float32(qo.s) != np.float32(OUTPUT_SCALE) or qo.zp != OUTPUT_ZERO_POINT:
        raise KilnError(f"QuantizedLogSoftmax output must be quantized with scale 16/256 and zero point 127 "
                        f"(TFLM's), not {qo.s!r} and {qo.zp}", node=node.name)
    with naming(node):
        return log_softmax_params(qi.s)


@register
class QuantizedLogSoftmax(Op):
    name = "QuantizedLogSoftmax"
    kind = OpKind.OPAQUE
    arity = (1, 1)
    attributes: dict = {}
    kernels = ("log_softmax_s8",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if not x.shape:
            raise KilnError("QuantizedLogSoftmax of a scalar", node=node.name)
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8",))
        _params(node, g)

    @classmethod
    def reference(cls, node, args, g):
        return [log_softmax_int8(args[0], _params(node, g))]

    @classmethod
    def lower(cls, node, ctx):
        shape = ctx.g.values[node.inputs[0]].shape
        p = _params(node, ctx.g)
        params = {"outer": int(np.prod(shape[:-1], dtype=np.int64)), "depth": int(shape[-1]),
                  "input_multiplier": p.input_multiplier, "input_left_shift": p.input_left_shift,
                  "reverse_scaling_divisor": p.reverse_scaling_divisor,
                  "reverse_scaling_right_shift": p.reverse_scaling_right_shift, "diff_min": p.diff_min}
        ctx.request(KernelRequest("log_softmax_s8", node, params, headers=("kiln_log_softmax.h",)))
