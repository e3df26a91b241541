"""QuantizedCumSum: TFLite Micro's int8 CUMSUM, a running sum along `axis` rescaled as its ADD.

Kiln's CumSum (codegen/ops/cumsum.py) is float and wrapping integers; int8 with quantization
is TFLM's reference_ops::CumSum instead (codegen.quant.cumsum): each input at ADD's common
scale (20 bits of headroom), a wrapping int32 running sum that starts at the scaled input
offset, one rescale to the output. `exclusive` and `reverse` as CumSum's.
"""

from __future__ import annotations

from codegen.ops.common import naming, per_tensor_quants, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.ops.softmax import normalized_axis, row_geometry
from codegen.quant.cumsum import CumSumParams, cumsum_int8, cumsum_params


def _params(node, g) -> CumSumParams:
    qi, qo = per_tensor_quants(node, g)
    with naming(node):
        return cumsum_params(qi.s, qi.zp, qo.s, qo.zp)


@register
class QuantizedCumSum(Op):
    name = "QuantizedCumSum"
    kind = OpKind.OPAQUE
    attributes = {"axis": 0, "exclusive": False, "reverse": False}
    arity = (1, 1)
    kernels = ("cumsum_s8",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        normalized_axis(node, len(x.shape))
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8",))
        _params(node, g)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        a = node.attrs
        return [cumsum_int8(x, _params(node, g), normalized_axis(node, x.ndim), bool(a["exclusive"]),
                            bool(a["reverse"]))]

    @classmethod
    def lower(cls, node, ctx):
        p = _params(node, ctx.g)
        params = {**row_geometry(node, ctx.g.values[node.inputs[0]].shape),
                  "exclusive": bool(node.attrs["exclusive"]), "reverse": bool(node.attrs["reverse"]),
                  "input_offset": p.input_offset, "input_multiplier": p.input_multiplier,
                  "input_shift": p.input_shift, "output_offset": p.output_offset,
                  "output_multiplier": p.output_multiplier, "output_shift": p.output_shift}
        ctx.request(KernelRequest("cumsum_s8", node, params, headers=("kiln_fixedpoint.h",)))
