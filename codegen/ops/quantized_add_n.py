"""QuantizedAddN: TFLite Micro's int8 ADD_N (reference_ops::AddN with add_n.cc's Prepare).

Every input shares one scale and zero point. TFLM brings each to twice the input scale with
20 bits of headroom (a multiplier of exactly 0.5: (q - zp) << 19, no rounding), sums them
starting from the input offset itself (its loop begins at x = -zp, not 0: a term kept for
bit-exactness), and rescales the sum once:

    acc = -zp + sum_j (x_j - zp)
    y = clamp(R(acc << 19, output) + output_zp) to int8
where R is TFLM's MultiplyByQuantizedMultiplier. Kiln takes up to MAX_INPUTS inputs, so the
sum stays well inside int32.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier

MAX_INPUTS = 15  # (127 + 15 * 255) << 19 < 2**31
HEADROOM_SHIFT = 19  # TFLM's left shift of 20, halved by its input multiplier of 0.5


def kernel_name(count: int) -> str:
    return f"add_n_s8_{count}"


@register
class QuantizedAddN(Op):
    name = "QuantizedAddN"
    kind = OpKind.ELEMENTWISE
    arity = (2, MAX_INPUTS)
    attributes = {"input_zp": 0, "output_zp": 0, "output": (0, 0)}
    kernels = tuple(kernel_name(n) for n in range(2, MAX_INPUTS + 1))

    @classmethod
    def infer(cls, node, ins):
        if any(x.shape != ins[0].shape for x in ins):
            raise KilnError(f"QuantizedAddN inputs differ in shape: {[list(x.shape) for x in ins]}", node=node.name)
        return [(ins[0].dtype, ins[0].shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int8",))
        m, s = node.attrs["output"]
        if not 0 <= m < 2 ** 31 or not -31 <= s <= 0:
            raise KilnError(f"QuantizedAddN output multiplier {m} / shift {s} out of range", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        a = node.attrs
        acc = -a["input_zp"] + sum(x.astype(np.int64) - a["input_zp"] for x in args)
        r = multiply_by_quantized_multiplier(acc << HEADROOM_SHIFT, *a["output"]).astype(np.int64)
        return [np.clip(r + a["output_zp"], -128, 127).astype(np.int8)]

    @classmethod
    def lower(cls, node, ctx):
        a = node.attrs
        params = {"n": ctx.g.values[node.inputs[0]].size, "input_zp": a["input_zp"], "output_zp": a["output_zp"],
                  "multiplier": a["output"][0], "shift": a["output"][1]}
        ctx.request(KernelRequest(kernel_name(len(node.inputs)), node, params, headers=("kiln_fixedpoint.h",)))
