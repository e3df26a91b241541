"""DepthwiseConv2D: each input channel convolved with its own depth_multiplier filters.

Input x[N,H,W,C], weights [1,KH,KW,C*M] (TFLite layout), optional bias [C*M]; output channel
c*M + m reads input channel c. TFLite DEPTHWISE_CONV_2D and ONNX Conv with group == C.
float32 and int8 (TFLM's reference_integer_ops::DepthwiseConvPerChannel, bit-exact).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.common import require_dtypes
from codegen.ops.conv2d import check_bias_shape, check_float_linear, float_linear_result, linear_request
from codegen.ops.conv_geometry import ConvGeometry, conv_geometry, windows
from codegen.ops.int8_linear import check_int8_accumulator, check_int8_linear, check_int16_linear
from codegen.ops.registry import Op, OpKind, register
from codegen.quant.linear import bias_or_zero, linear_int8_params, requantize, requantize_s16


def _geometry(node: Node, x_shape, w_shape) -> ConvGeometry:
    return conv_geometry(node, x_shape, w_shape[1:3])


def _weight_rows(w: np.ndarray) -> np.ndarray:
    """[1,KH,KW,C*M] weights as one row of KH*KW taps per output channel."""
    return w.reshape(-1, w.shape[3]).T


def _depthwise_sum(win: np.ndarray, w: np.ndarray, multiplier: int) -> np.ndarray:
    """sum over (ky, kx) of win[..., ky, kx, oc // M] * w[0, ky, kx, oc], as [N,OH,OW,C*M]."""
    per_out = np.repeat(win, multiplier, axis=5)  # input channel c -> outputs c*M .. c*M+M-1
    return np.einsum("nyxhwc,hwc->nyxc", per_out, w[0])


@register
class DepthwiseConv2D(Op):
    name = "DepthwiseConv2D"
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes = {"strides": (1, 1), "dilations": (1, 1), "pads": (0, 0, 0, 0),
                  "depth_multiplier": 1, "activation": "none"}
    arity = (2, 3)
    kernels = ("depthwise_conv2d_f32", "depthwise_conv2d_s8", "depthwise_conv2d_s16")

    @classmethod
    def infer(cls, node, ins):
        x, w = ins[0], ins[1]
        b = ins[2] if len(ins) > 2 else None
        if w is None or len(w.shape) != 4 or w.shape[0] != 1:
            raise KilnError(f"DepthwiseConv2D weights must be [1,KH,KW,C*M], got "
                            f"{None if w is None else list(w.shape)}", node=node.name)
        geom = _geometry(node, x.shape, w.shape)
        m = node.attrs["depth_multiplier"]
        if not isinstance(m, (int, np.integer)) or m < 1 or w.shape[3] != x.shape[3] * m:
            raise KilnError(f"DepthwiseConv2D weights have {w.shape[3]} channels; input channels "
                            f"{x.shape[3]} x depth_multiplier {m!r} do not match", node=node.name)
        check_bias_shape(node, b, w.shape[3])
        return [(x.dtype, (geom.batches, geom.out_h, geom.out_w, w.shape[3]))]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        kind = require_dtypes(node, g, ("float32", "int8", "int16"))
        if kind == "float32":
            check_float_linear(node, g)
            return
        w = g.values[node.inputs[1]]
        if kind == "int16":
            check_int16_linear(node, g, 3, w.shape[3], _weight_rows(w.data))
            return
        check_int8_linear(node, g, weight_axis=3, channels=w.shape[3])
        check_int8_accumulator(node, g, _weight_rows(w.data), w.shape[3])

    @classmethod
    def macs(cls, node: Node, g: Graph) -> int:
        w = g.values[node.inputs[1]]
        return g.values[node.outputs[0]].size * w.shape[1] * w.shape[2]

    @classmethod
    def reference(cls, node, args, g):
        x, w = args[0], args[1]
        geom = _geometry(node, x.shape, w.shape)
        mult, channels = int(node.attrs["depth_multiplier"]), w.shape[3]
        if x.dtype == np.int8:
            p = linear_int8_params(node, g, channels)
            win = windows(x.astype(np.int64) - p.input_zp, geom, 0)  # padding adds nothing
            acc = _depthwise_sum(win, w.astype(np.int64), mult) + bias_or_zero(args, channels)
            return [requantize(acc, p)]
        if x.dtype == np.int16:  # zero points 0: TFLM's int16 kernel ignores them
            acc = _depthwise_sum(windows(x.astype(np.int64), geom, 0), w.astype(np.int64), mult)
            return [requantize_s16(acc + bias_or_zero(args, channels), linear_int8_params(node, g, channels))]
        acc = _depthwise_sum(windows(x.astype(np.float64), geom, 0.0), w.astype(np.float64), mult)
        return [float_linear_result(acc, args, node)]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        x, wv = g.values[node.inputs[0]], g.values[node.inputs[1]]
        fields = {**_geometry(node, x.shape, wv.shape).params(), "in_c": x.shape[3],
                  "depth_multiplier": int(node.attrs["depth_multiplier"])}
        ctx.request(linear_request(node, "depthwise_conv2d", x.dtype, fields))
