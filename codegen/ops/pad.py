"""Pad: constant padding (ONNX Pad mode=constant, TFLite PAD / PADV2), float32 and int8.

`pads` is ONNX's order (all begins, then all ends), `value` a real number. int8 pads with
`value` quantized to the output (TFLite's PAD pads with the output zero point, which is 0.0
quantized; PADV2's constant arrives here dequantized and quantizes back to itself). Like
TFLM, int8 copies the input bytes unchanged, so input and output share one quantization.

The kernel fills the output with the pad value, then copies the input's innermost rows
into place. At compile time, dimensions without padding merge into the dimension before
them, so the kernel loops over at most MAX_DIMS dimensions.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import quant_of, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant import quantize_float_to_int8

MAX_DIMS = 6


def pad_amounts(node, rank: int) -> list[tuple[int, int]]:
    pads = [int(p) for p in node.attrs["pads"]]
    if len(pads) != 2 * rank:
        raise KilnError(f"pads has {len(pads)} values, expected {2 * rank} (begins then ends)",
                        node=node.name)
    if any(p < 0 for p in pads):
        raise KilnError(f"negative pads {pads} (cropping) are not supported", node=node.name)
    return list(zip(pads[:rank], pads[rank:]))


def pad_plan(shape: tuple[int, ...], pads: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Coalesced (input size, pad before, pad after) per dimension, outermost first.

    A dimension without padding merges into the one before it: its rows are contiguous in
    both input and output, so they scale that dimension's size and pads.
    """
    plan: list[tuple[int, int, int]] = []
    for d, (before, after) in zip(shape, pads):
        if plan and before == 0 and after == 0:
            size, b, a = plan[-1]
            plan[-1] = (size * d, b * d, a * d)
        else:
            plan.append((int(d), before, after))
    return plan or [(1, 0, 0)]


def int8_pad_value(node, g) -> int:
    q = quant_of(g, node.outputs[0], node)
    return int(quantize_float_to_int8(np.float32(node.attrs["value"]), q.s, q.zp))


@register
class Pad(Op):
    name = "Pad"
    kind = OpKind.INJECTIVE
    attributes = {"pads": (), "value": 0.0}
    arity = (1, 1)
    kernels = ("pad_f32", "pad_s8")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        pads = pad_amounts(node, len(x.shape))
        return [(x.dtype, tuple(d + b + a for d, (b, a) in zip(x.shape, pads)))]

    @classmethod
    def check(cls, node, g):
        dtype = require_dtypes(node, g, ("float32", "int8"))
        x = g.values[node.inputs[0]]
        if dtype == "int8":
            qi, qo = quant_of(g, node.inputs[0], node), quant_of(g, node.outputs[0], node)
            if qi.per_channel or (qi.scale, qi.zero_point) != (qo.scale, qo.zero_point):
                raise KilnError("int8 Pad must keep its input's per-tensor quantization "
                                "(TFLM's PAD copies the bytes)", node=node.name)
        if len(pad_plan(x.shape, pad_amounts(node, len(x.shape)))) > MAX_DIMS:
            raise KilnError(f"Pad of more than {MAX_DIMS} padded dimensions", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        pads = pad_amounts(node, x.ndim)
        value = int8_pad_value(node, g) if x.dtype == np.int8 else np.float32(node.attrs["value"])
        return [np.pad(x, pads, mode="constant", constant_values=value).astype(x.dtype)]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        x = g.values[node.inputs[0]]
        plan = pad_plan(x.shape, pad_amounts(node, len(x.shape)))
        plan = [(1, 0, 0)] * (MAX_DIMS - len(plan)) + plan
        out_dims = [d + b + a for d, b, a in plan]
        out_strides = [int(np.prod(out_dims[k + 1:], dtype=np.int64)) for k in range(MAX_DIMS)]
        params = {
            "out_size": g.values[node.outputs[0]].size,
            "in_dims": tuple(d for d, _, _ in plan),
            "out_strides": tuple(out_strides),
            "out_offset": sum(b * s for (_, b, _), s in zip(plan, out_strides)),
        }
        if x.dtype == "int8":
            params["value"] = int8_pad_value(node, g)
            kernel = "pad_s8"
        else:
            params["value"] = float(np.float32(node.attrs["value"]))
            kernel = "pad_f32"
        ctx.request(KernelRequest(kernel, node, params, (ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0]))))
