"""Integer ops computed exactly in float32: ConvInteger and MatMulInteger (int32 sums of 8-bit
products); MaxPool on integer types Kiln has no pooling kernel for is ops_spatial.in_float32.

float32 holds every integer below 2^24 exactly, so an 8-bit product and a float32 sum of such
products are exact while the partial sums stay below 2^24; the converters check that bound
from the value ranges (the weights' actual values when they are constants) and refuse a
model that could exceed it rather than round. The float Conv / MatMul kernels do the
work, as in the QLinear fallback of ops_quant.py.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import CONVERTERS, ConvertContext, converter
from codegen.frontends.onnx.ops_elementwise import cast_to
from codegen.frontends.onnx.ops_quant import _centered
from codegen.frontends.onnx.reader import OnnxNode

EXACT_FLOAT32_SUM = 2 ** 24


def _largest_centered(ctx: ConvertContext, node: OnnxNode, index: int, zp_index: int) -> int:
    """A bound on |input - zero point|: from the constant's values, else from its type's range."""
    data = ctx.const(node.input(index))
    if data is not None:
        lo, hi = int(data.min()), int(data.max())
    else:
        info = np.iinfo(np.dtype(ctx.onnx_dtype(node.input(index))))
        lo, hi = int(info.min), int(info.max)
    zp = ctx.const(node.input(zp_index)) if node.input(zp_index) else None
    if node.input(zp_index) and zp is None:  # computed at run time: anywhere in its type
        info = np.iinfo(np.dtype(ctx.onnx_dtype(node.input(zp_index))))
        zp = np.array([info.min, info.max])
    zp_lo, zp_hi = (0, 0) if zp is None else (int(zp.min()), int(zp.max()))
    return max(abs(lo - zp_hi), abs(hi - zp_lo))


def _integer_product(ctx: ConvertContext, node: OnnxNode, op: str, attrs: dict, terms: int,
                     w_zp_shape: tuple[int, ...]) -> None:
    """node.outputs[0] = int32(op(input 0 - zero point 2, input 1 - zero point 3))."""
    a, w = _largest_centered(ctx, node, 0, 2), _largest_centered(ctx, node, 1, 3)
    if terms * a * w >= EXACT_FLOAT32_SUM:
        raise node.error(f"{terms} products of up to {a}*{w} may sum past 2^24, where Kiln's float32 "
                         f"accumulation of integers is no longer exact")
    centered = [_centered(ctx, node, 0, 2, ()), _centered(ctx, node, 1, 3, w_zp_shape)]
    product = ctx.fresh(f"{node.name}_integer_product")
    CONVERTERS[op](ctx, OnnxNode(op, f"{node.name}_{op.lower()}", centered, [product], attrs))
    cast_to(ctx, node, product, "int32")


@converter("MatMulInteger")
def convert_matmul_integer(ctx, node):
    # b_zero_point is per column of B: it broadcasts along B's last axis
    _integer_product(ctx, node, "MatMul", {}, ctx.shape(node.input(0))[-1], (-1,))


@converter("ConvInteger")
def convert_conv_integer(ctx, node):
    w_shape = ctx.shape(node.input(1))
    # w_zero_point is per output channel, the first axis of OIHW weights
    _integer_product(ctx, node, "Conv", dict(node.attrs), int(np.prod(w_shape[1:])),
                     (-1,) + (1,) * (len(w_shape) - 1))
