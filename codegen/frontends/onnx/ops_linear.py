"""Matrix products: Gemm and MatMul, as FullyConnected when the weights are constant.

FullyConnected wants weights [N, K] (TFLite's layout); Gemm's alpha and beta are folded into
constant weights and bias at import time, so they cost nothing at run time.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.reader import OnnxNode


def _scalar(ctx: ConvertContext, node: OnnxNode, role: str, value: float) -> str:
    return ctx.weight(node, role, np.array(value, np.float32))


def _float_const(ctx: ConvertContext, name: str) -> np.ndarray | None:
    data = ctx.computed_const(name)
    return data if data is not None and data.dtype == np.float32 else None


@converter("Gemm")
def convert_gemm(ctx, node):
    """Y = alpha * A' B' + beta * C, with A' = A or A^T (transA), B' = B or B^T (transB)."""
    a, b, c = node.input(0), node.input(1), node.input(2)
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    trans_a, trans_b = bool(node.attr("transA", 0)), bool(node.attr("transB", 0))
    a_shape, b_shape = ctx.shape(a), ctx.shape(b)
    if len(a_shape) != 2 or len(b_shape) != 2:
        raise node.error(f"A and B must be 2-D, got {list(a_shape)} and {list(b_shape)}")
    m, k = a_shape[::-1] if trans_a else a_shape
    kb, n = b_shape[::-1] if trans_b else b_shape
    if k != kb:
        raise node.error(f"inner dimensions differ: A' is {[m, k]}, B' is {[kb, n]}")
    if c and beta != 0.0:
        c_shape = ctx.shape(c)
        if np.broadcast_shapes(c_shape, (m, n)) != (m, n):
            raise node.error(f"C of shape {list(c_shape)} does not broadcast to {[m, n]}")
    else:
        c = ""
    out = node.outputs[0]
    x = ctx.kiln(a)
    if trans_a:
        x = ctx.add(node, "Transpose", [x], role="transpose_a", perm=(1, 0))
    weights = _float_const(ctx, b)
    cdata = _float_const(ctx, c) if c else None
    if weights is not None:
        w = (weights if trans_b else weights.T).astype(np.float32) * np.float32(alpha)
        ins = [x, ctx.weight(node, "weight", w)]
        if cdata is not None and np.broadcast_shapes(cdata.shape, (1, n)) == (1, n):
            bias = np.broadcast_to(cdata.astype(np.float32) * np.float32(beta), (1, n)).reshape(n)
            ins.append(ctx.weight(node, "bias", bias))
            c = ""
        y = ctx.add(node, "FullyConnected", ins, out=None if c else out)
    else:
        w = ctx.kiln(b)
        if trans_b:
            w = ctx.add(node, "Transpose", [w], role="transpose_b", perm=(1, 0))
        last = not c and alpha == 1.0
        y = ctx.add(node, "MatMul", [x, w], out=out if last else None)
        if alpha != 1.0:
            y = ctx.add(node, "Mul", [y, _scalar(ctx, node, "alpha", alpha)], role="alpha",
                        out=None if c else out)
    if c:
        if cdata is not None:
            bias = ctx.weight(node, "bias", cdata.astype(np.float32) * np.float32(beta))
        else:
            bias = ctx.kiln(c)
            if beta != 1.0:
                bias = ctx.add(node, "Mul", [bias, _scalar(ctx, node, "beta", beta)], role="beta")
        ctx.add(node, "Add", [y, bias], role="bias", out=out)


@converter("MatMul")
def convert_matmul(ctx, node):
    """A @ B: FullyConnected (weights B^T) when B is a 2-D float constant, else MatMul."""
    a, b = node.input(0), node.input(1)
    a_shape = ctx.shape(a)
    weights = _float_const(ctx, b)
    if weights is not None and weights.ndim == 2 and a_shape and a_shape[-1] == weights.shape[0]:
        w = ctx.weight(node, "weight", np.ascontiguousarray(weights.T))
        ctx.add(node, "FullyConnected", [ctx.kiln(a), w], out=node.outputs[0], keep_dims=True)
        return
    ctx.add(node, "MatMul", [ctx.kiln(a), ctx.kiln(b)], out=node.outputs[0])
