"""QuantizedL2Normalization: TFLite Micro's int8 L2_NORMALIZATION along the last axis.

Kiln's float L2 normalisation is a chain of float ops (the TFLite frontend builds it); int8 is
TFLM's own kernel (codegen.quant.l2_normalization, C mirror runtime_c/kiln_l2norm.h): the
result is (x - zero point) / norm in Q0.7, written without the output's zero point or scale,
exactly as TFLM writes it.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import per_tensor_quants, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.l2_normalization import l2_normalization_int8


def _input_zp(node, g) -> int:
    return int(per_tensor_quants(node, g)[0].zp)


@register
class QuantizedL2Normalization(Op):
    name = "QuantizedL2Normalization"
    kind = OpKind.OPAQUE
    arity = (1, 1)
    attributes: dict = {}
    kernels = ("l2norm_s8",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        if not x.shape:
            raise KilnError("QuantizedL2Normalization of a scalar", node=node.name)
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8",))
        _input_zp(node, g)

    @classmethod
    def reference(cls, node, args, g):
        return [l2_normalization_int8(args[0], _input_zp(node, g))]

    @classmethod
    def lower(cls, node, ctx):
        shape = ctx.g.values[node.inputs[0]].shape
        params = {"outer": int(np.prod(shape[:-1], dtype=np.int64)), "depth": int(shape[-1]),
                  "input_zp": _input_zp(node, ctx.g)}
        ctx.request(KernelRequest("l2norm_s8", node, params, headers=("kiln_l2norm.h",)))
