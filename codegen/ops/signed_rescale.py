"""SignedRescale: int16 -> int16 requantization with its own multiplier on each side of the
input zero point, TFLite Micro's int16 ABS and LEAKY_RELU (int8 runs them as 256-entry tables
in the TFLite frontend; an int16 table would take 128 KB).

    v = x - input_zp
    r = v >= 0 ? R(v, positive) : R(negate ? -v : v, negative)
    y = clamp(r + output_zp) to int16
where R(v, (multiplier, shift)) is TFLM's MultiplyByQuantizedMultiplier, or v itself when the
multiplier is 0 (ABS with equal scales does not rescale).
"""

from __future__ import annotations

import numpy as np

from codegen.ops.common import check_sign_multipliers, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier


def _rescaled(v: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    return v if multiplier == 0 else multiply_by_quantized_multiplier(v, multiplier, shift).astype(np.int64)


@register
class SignedRescale(Op):
    name = "SignedRescale"
    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    attributes = {"input_zp": 0, "output_zp": 0, "positive": (0, 0), "negative": (0, 0), "negate": False}
    kernels = ("signed_rescale_s16",)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int16",))
        check_sign_multipliers(node)

    @classmethod
    def reference(cls, node, args, g):
        a = node.attrs
        v = args[0].astype(np.int64) - a["input_zp"]
        neg = _rescaled(-v if a["negate"] else v, *a["negative"])
        r = np.where(v >= 0, _rescaled(v, *a["positive"]), neg)
        return [np.clip(r + a["output_zp"], -32768, 32767).astype(np.int16)]

    @classmethod
    def lower(cls, node, ctx):
        a = node.attrs
        params = {"n": ctx.g.values[node.inputs[0]].size, "input_zp": a["input_zp"], "output_zp": a["output_zp"],
                  "pos_multiplier": a["positive"][0], "pos_shift": a["positive"][1],
                  "neg_multiplier": a["negative"][0], "neg_shift": a["negative"][1], "negate": int(a["negate"])}
        ctx.request(KernelRequest("signed_rescale_s16", node, params, headers=("kiln_fixedpoint.h",)))
