"""QuantizedPRelu: TFLite Micro's int8 / int16 PRELU (reference_ops::BroadcastPrelu4DSlow) with
a constant alpha, one value per channel (the last axis) or one for all.

    v = x - input_zp
    r = v >= 0 ? R(v, positive) : R(v * alpha[c], negative)
    y = clamp(r + output_zp) to the type
where alpha[c] is the channel's stored alpha minus its zero point and R is TFLM's
MultiplyByQuantizedMultiplier. The product v * alpha is rescaled as a whole (not v by a
per-channel multiplier): that is where TFLM rounds.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import check_sign_multipliers, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier

_RANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}


@register
class QuantizedPRelu(Op):
    name = "QuantizedPRelu"
    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    attributes = {"alpha": (0,), "input_zp": 0, "output_zp": 0, "positive": (0, 0), "negative": (0, 0)}
    kernels = ("prelu_s8", "prelu_s16")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8", "int16"))
        x = g.values[node.inputs[0]]
        channels = len(node.attrs["alpha"])
        if channels != 1 and (not x.shape or x.shape[-1] != channels):
            raise KilnError(f"QuantizedPRelu has {channels} alphas for an input of shape {list(x.shape)}",
                            node=node.name)
        check_sign_multipliers(node)

    @classmethod
    def reference(cls, node, args, g):
        a = node.attrs
        x = args[0]
        v = x.astype(np.int64) - a["input_zp"]
        alpha = np.asarray(a["alpha"], np.int64)
        pos = multiply_by_quantized_multiplier(v, *a["positive"]).astype(np.int64)
        neg = multiply_by_quantized_multiplier(v * alpha, *a["negative"]).astype(np.int64)
        lo, hi = _RANGE[str(x.dtype)]
        return [np.clip(np.where(v >= 0, pos, neg) + a["output_zp"], lo, hi).astype(x.dtype)]

    @classmethod
    def lower(cls, node, ctx):
        a = node.attrs
        x = ctx.g.values[node.inputs[0]]
        alpha = ctx.constant(node, "alpha", np.asarray(a["alpha"], np.int32), "int32")
        params = {"n": x.size, "channels": len(a["alpha"]), "input_zp": a["input_zp"], "output_zp": a["output_zp"],
                  "pos_multiplier": a["positive"][0], "pos_shift": a["positive"][1],
                  "neg_multiplier": a["negative"][0], "neg_shift": a["negative"][1], "alpha": alpha}
        kernel = "prelu_s8" if x.dtype == "int8" else "prelu_s16"
        ctx.request(KernelRequest(kernel, node, params, headers=("kiln_fixedpoint.h",)))
