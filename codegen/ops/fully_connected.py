"""FullyConnected: y = x W^T + b over the last axis, with a fused activation.

x[..,K] is read as rows of K elements, weights are [O,K], the optional bias [O]. Output
[size/K, O], or x.shape[:-1] + [O] with keep_dims (TFLite FULLY_CONNECTED; ONNX Gemm with
transB and a constant B). float32, int8 and int16 with int8 weights (TFLM's
reference_integer_ops::FullyConnected, per-tensor or per-channel weights, bit-exact: see
codegen/quant/linear.py).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.common import require_dtypes
from codegen.ops.conv2d import check_bias_shape, check_float_linear, float_linear_result, linear_request
from codegen.ops.int8_linear import check_int8_accumulator, check_int8_linear, check_int16_linear
from codegen.ops.registry import Op, OpKind, register
from codegen.quant.linear import bias_or_zero, linear_int8_params, requantize, requantize_s16


@register
class FullyConnected(Op):
    name = "FullyConnected"
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes = {"activation": "none", "keep_dims": False}
    arity = (2, 3)
    kernels = ("fully_connected_f32", "fully_connected_s8", "fully_connected_s16")

    @classmethod
    def infer(cls, node, ins):
        x, w = ins[0], ins[1]
        b = ins[2] if len(ins) > 2 else None
        if w is None or len(w.shape) != 2:
            raise KilnError(f"FullyConnected weights must be 2-D [O,K], got "
                            f"{None if w is None else list(w.shape)}", node=node.name)
        out_c, k = w.shape
        if k < 1 or x.size % k != 0:
            raise KilnError(f"FullyConnected input {list(x.shape)} is not made of rows of {k} "
                            "elements (the weights' K)", node=node.name)
        check_bias_shape(node, b, out_c)
        if node.attrs["keep_dims"]:
            if not x.shape or x.shape[-1] != k:
                raise KilnError(f"FullyConnected with keep_dims needs the input's last axis to be "
                                f"K={k}, got {list(x.shape)}", node=node.name)
            return [(x.dtype, tuple(x.shape[:-1]) + (out_c,))]
        return [(x.dtype, (x.size // k, out_c))]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        kind = require_dtypes(node, g, ("float32", "int8", "int16"))
        if kind == "float32":
            check_float_linear(node, g)
            return
        w = g.values[node.inputs[1]]
        if kind == "int16":
            check_int16_linear(node, g, 0, w.shape[0], w.data)
            return
        check_int8_linear(node, g, weight_axis=0, channels=w.shape[0])
        check_int8_accumulator(node, g, w.data, w.shape[0])

    @classmethod
    def macs(cls, node: Node, g: Graph) -> int:
        return g.values[node.outputs[0]].size * g.values[node.inputs[1]].shape[1]

    @classmethod
    def reference(cls, node, args, g):
        x, w = args[0], args[1]
        out_shape = g.values[node.outputs[0]].shape
        out_c, k = w.shape
        if x.dtype == np.int8:
            p = linear_int8_params(node, g, out_c, fc_per_tensor=True)
            rows = (x.reshape(-1, k).astype(np.int64) - p.input_zp).astype(np.float64)
            # Exact in float64: products are at most 255 * 128 and sums stay far below 2**53.
            acc = np.rint(rows @ w.astype(np.float64).T).astype(np.int64) + bias_or_zero(args, out_c)
            return [requantize(acc, p).reshape(out_shape)]
        if x.dtype == np.int16:  # exact in float64 too: products at most 32768 * 128
            acc = np.rint(x.reshape(-1, k).astype(np.float64) @ w.astype(np.float64).T).astype(np.int64)
            p = linear_int8_params(node, g, out_c, fc_per_tensor=True)
            return [requantize_s16(acc + bias_or_zero(args, out_c), p).reshape(out_shape)]
        acc = x.reshape(-1, k).astype(np.float64) @ w.astype(np.float64).T
        return [float_linear_result(acc, args, node).reshape(out_shape)]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        x, wv = g.values[node.inputs[0]], g.values[node.inputs[1]]
        out_c, k = wv.shape
        fields = {"batches": x.size // k, "in_k": k, "out_c": out_c}
        ctx.request(linear_request(node, "fully_connected", x.dtype, fields))
