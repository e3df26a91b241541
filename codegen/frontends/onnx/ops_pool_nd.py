"""The pooling forms Kiln's NHWC 2-D pools lack, as one channels-first PoolND: 3-D inputs,
dilations, ceil mode with LpPool, and MaxPool's Indices output. The MaxPool, AveragePool and
LpPool converters (ops_spatial) hand such nodes here (`needs_pool_nd`).
"""

from __future__ import annotations

from codegen.frontends.onnx.context import ConvertContext
from codegen.frontends.onnx.ops_shape import add_multi
from codegen.frontends.onnx.reader import OnnxNode

MODES = {"MaxPool": "max", "AveragePool": "average", "LpPool": "lp"}


def needs_pool_nd(ctx: ConvertContext, node: OnnxNode) -> bool:
    rank = len(ctx.shape(node.input(0)))
    dilated = any(int(d) != 1 for d in node.attr("dilations", []))
    indices = len(node.outputs) > 1 and bool(node.outputs[1])
    lp_ceil = node.op_type == "LpPool" and bool(node.attr("ceil_mode", 0))
    return rank == 5 or dilated or indices or lp_ceil


def same_pads(auto_pad: str, spatial, kernel, strides, dilations) -> list[int]:
    """ONNX pads (all begins, then all ends) of auto_pad SAME_UPPER or SAME_LOWER: the output
    is ceil(size / stride) and an odd total pad puts its extra element at the end (UPPER) or
    the beginning (LOWER). The 2-D convolution and pooling converters (ops_spatial) share it."""
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        begins.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
        ends.append(total - begins[-1])
    return begins + ends


def explicit_pads(node: OnnxNode, spatial: tuple[int, ...], kernel: list[int], strides: list[int],
                  dilations: list[int]) -> list[int]:
    """ONNX pads (all begins, then all ends) with `auto_pad` resolved."""
    auto_pad = node.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad == "NOTSET":
        return [int(p) for p in node.attr("pads", [0] * 2 * len(spatial))]
    if auto_pad == "VALID":
        return [0] * 2 * len(spatial)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"auto_pad '{auto_pad}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    return same_pads(auto_pad, spatial, kernel, strides, dilations)


def convert_pool_nd(ctx: ConvertContext, node: OnnxNode) -> None:
    shape = ctx.shape(node.input(0))
    n = len(shape) - 2
    kernel = [int(k) for k in node.attr("kernel_shape", [])]
    if not kernel:
        raise node.error("attribute 'kernel_shape' is missing")
    strides = [int(s) for s in node.attr("strides", [1] * n)]
    dilations = [int(d) for d in node.attr("dilations", [1] * n)]
    storage_order = int(node.attr("storage_order", 0))
    outs = [node.outputs[0], node.outputs[1] if len(node.outputs) > 1 else ""]
    attrs = dict(mode=MODES[node.op_type], kernel=tuple(kernel), strides=tuple(strides),
                 dilations=tuple(dilations), pads=tuple(explicit_pads(node, shape[2:], kernel, strides, dilations)),
                 ceil_mode=bool(node.attr("ceil_mode", 0)), count_include_pad=bool(node.attr("count_include_pad", 0)),
                 p=int(node.attr("p", 2)), with_indices=bool(outs[1]), column_major_indices=storage_order == 1)
    x = ctx.kiln(node.input(0))
    if not outs[1]:
        ctx.add(node, "PoolND", [x], out=outs[0], **attrs)
        return
    add_multi(ctx, node, "PoolND", [x], outs, **attrs)
