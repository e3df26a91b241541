"""Requantize: a quantized integer tensor to another integer type and quantization, as TFLite
Micro's QUANTIZE between integer tensors (int8 -> uint8 / int16 / int32, int16 -> int8 / int16 /
int32, uint8 -> int8). int8 -> int8 stays with Quantize (a 256-entry table).

TFLM's Requantize: QuantizeMultiplier(double(s_in) / double(s_out)), then per element
MultiplyByQuantizedMultiplier(x - zp_in) + zp_out, saturated to the output type (its XOR fast
path for int8 <-> uint8 with equal scales gives the same numbers).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import C_SUFFIX
from codegen.ops.common import quant_of
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant import requantize_params
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier

# input type -> the output types TFLite Micro's QUANTIZE requantizes it to
TARGETS = {"int8": ("uint8", "int16", "int32"), "int16": ("int8", "int16", "int32"), "uint8": ("int8",)}
PAIRS = tuple((a, b) for a, targets in TARGETS.items() for b in targets)


def kernel_name(src: str, dst: str) -> str:
    return f"requantize_{C_SUFFIX[src]}_{C_SUFFIX[dst]}"


def _constants(node, g) -> tuple[int, int, int, int]:
    """(multiplier, shift, input zero point, output zero point), one quantization per tensor."""
    qi, qo = quant_of(g, node.inputs[0], node), quant_of(g, node.outputs[0], node)
    if qi.per_channel or qo.per_channel:
        raise KilnError("per-channel requantization is not supported", node=node.name)
    multiplier, shift = requantize_params(qi.s, qo.s)
    return multiplier, shift, qi.zp, qo.zp


@register
class Requantize(Op):
    name = "Requantize"
    kind = OpKind.ELEMENTWISE
    attributes = {"to": "int8"}
    arity = (1, 1)
    kernels = tuple(kernel_name(a, b) for a, b in PAIRS)

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        to = node.attrs["to"]
        if to not in TARGETS.get(x.dtype, ()):
            raise KilnError(f"Requantize of {x.dtype} to {to} is not supported (pairs: "
                            f"{', '.join(f'{a} to {b}' for a, b in PAIRS)})", node=node.name)
        return [(to, x.shape)]

    @classmethod
    def check(cls, node, g):
        _constants(node, g)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        m, s, zp_in, zp_out = _constants(node, g)
        scaled = multiply_by_quantized_multiplier(x.astype(np.int64) - zp_in, m, s).astype(np.int64) + zp_out
        info = np.iinfo(node.attrs["to"])
        return [np.clip(scaled, info.min, info.max).astype(node.attrs["to"])]

    @classmethod
    def lower(cls, node, ctx):
        x = node.inputs[0]
        m, s, zp_in, zp_out = _constants(node, ctx.g)
        params = {"n": ctx.g.values[x].size, "input_zp": zp_in, "output_zp": zp_out, "multiplier": m, "shift": s}
        ctx.request(KernelRequest(kernel_name(ctx.g.values[x].dtype, node.attrs["to"]), node, params,
                                  headers=("kiln_fixedpoint.h",)))
