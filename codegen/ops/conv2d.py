"""Conv2D: 2-D convolution over an NHWC input with OHWI weights and an optional bias.

ONNX Conv (after the frontend's NCHW -> NHWC transposes) and TFLite CONV_2D. float32, int8
and int16 with int8 weights (TFLM's reference_integer_ops::ConvPerChannel, bit-exact: see
codegen/quant/linear.py).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ir.types import Value
from codegen.ops.common import apply_float_activation, check_activation, float_activation, require_dtypes
from codegen.ops.conv_geometry import ConvGeometry, conv_geometry, windows
from codegen.ops.int8_linear import check_int8_accumulator, check_int8_linear, check_int16_linear
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.linear import bias_or_zero, linear_int8_params, requantize, requantize_s16


def ohwi_geometry(node: Node, x_shape, w_shape) -> ConvGeometry:
    return conv_geometry(node, x_shape, w_shape[1:3])


def ohwi_output_shape(node: Node, ins) -> tuple[int, ...]:
    """NHWC output shape of a convolution with OHWI weights [O,KH,KW,C] and optional bias [O]
    (Conv2D, HybridConv2D), the weights and bias checked against the input."""
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    if w is None or len(w.shape) != 4:
        raise KilnError(f"{node.op} weights must be 4-D [O,KH,KW,C], got "
                        f"{None if w is None else list(w.shape)}", node=node.name)
    geom = ohwi_geometry(node, x.shape, w.shape)
    if w.shape[3] != x.shape[3]:
        raise KilnError(f"{node.op} weights {list(w.shape)} expect {w.shape[3]} input channels, "
                        f"the input has {x.shape[3]}", node=node.name)
    check_bias_shape(node, b, w.shape[0])
    return (geom.batches, geom.out_h, geom.out_w, w.shape[0])


def check_float_linear(node: Node, g: Graph) -> None:
    """Every tensor of a float32 linear op (weights, bias, output) must be float32."""
    for name in node.inputs[1:] + node.outputs:
        if name and g.values[name].dtype != "float32":
            raise KilnError(f"float32 {node.op} with {g.values[name].dtype} tensor '{name}' has no "
                            "kernel", node=node.name)
    check_activation(node)


def check_bias_shape(node: Node, bias: Value | None, channels: int) -> None:
    """A bias, when given, holds one value per output channel."""
    if bias is not None and bias.shape != (channels,):
        raise KilnError(f"{node.op} bias shape {list(bias.shape)}, expected [{channels}]", node=node.name)


def float_linear_result(acc: np.ndarray, args: list, node: Node) -> np.ndarray:
    """A float linear op's reference output from its float64 sums: plus the bias when given,
    rounded to float32 once, then the fused activation (Conv2D, DepthwiseConv2D, GroupConv2D,
    ConvTranspose2D, FullyConnected)."""
    if len(args) > 2 and args[2] is not None:
        acc = acc + args[2].astype(np.float64)
    return apply_float_activation(acc.astype(np.float32), node)


def float_bias_arg(node: Node, ctx, channels: int):
    """The bias argument of a float kernel: the bias tensor, or zeros when it is absent."""
    b = node.inputs[2] if len(node.inputs) > 2 else ""
    return ctx.tensor(b) if b else ctx.constant(node, "zero_bias", np.zeros(channels), "float32")


@register
class Conv2D(Op):
    name = "Conv2D"
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes = {"strides": (1, 1), "dilations": (1, 1), "pads": (0, 0, 0, 0), "activation": "none"}
    arity = (2, 3)
    kernels = ("conv2d_f32", "conv2d_s8", "conv2d_s16")

    @classmethod
    def infer(cls, node, ins):
        return [(ins[0].dtype, ohwi_output_shape(node, ins))]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        kind = require_dtypes(node, g, ("float32", "int8", "int16"))
        if kind == "float32":
            check_float_linear(node, g)
            return
        w = g.values[node.inputs[1]]
        if kind == "int16":
            check_int16_linear(node, g, 0, w.shape[0], w.data.reshape(w.shape[0], -1))
            return
        check_int8_linear(node, g, weight_axis=0, channels=w.shape[0])
        check_int8_accumulator(node, g, w.data.reshape(w.shape[0], -1), w.shape[0])

    @classmethod
    def macs(cls, node: Node, g: Graph) -> int:
        y, w = g.values[node.outputs[0]], g.values[node.inputs[1]]
        return y.size * w.shape[1] * w.shape[2] * w.shape[3]

    @classmethod
    def reference(cls, node, args, g):
        x, w = args[0], args[1]
        geom = ohwi_geometry(node, x.shape, w.shape)
        channels = w.shape[0]
        if x.dtype == np.int8:
            p = linear_int8_params(node, g, channels)
            win = windows(x.astype(np.int64) - p.input_zp, geom, 0)  # padding adds nothing
            acc = _dot(win, w) + bias_or_zero(args, channels)
            return [requantize(acc, p)]
        if x.dtype == np.int16:  # zero points 0: TFLM's int16 kernel ignores them
            acc = _dot(windows(x.astype(np.int64), geom, 0), w) + bias_or_zero(args, channels)
            return [requantize_s16(acc, linear_int8_params(node, g, channels))]
        acc = np.tensordot(windows(x.astype(np.float64), geom, 0.0), w.astype(np.float64),
                           axes=([3, 4, 5], [1, 2, 3]))
        return [float_linear_result(acc, args, node)]

    @classmethod
    def lower(cls, node, ctx):
        """A convolution of this geometry: the kernel registry lays out its weights and
        requantization for the kernel it chooses (codegen/kernels/*/conv2d_*.py)."""
        g = ctx.g
        x, wv = g.values[node.inputs[0]], g.values[node.inputs[1]]
        fields = {**ohwi_geometry(node, x.shape, wv.shape).params(), "in_c": wv.shape[3], "out_c": wv.shape[0]}
        ctx.request(linear_request(node, "conv2d", x.dtype, fields))


def linear_request(node: Node, kind: str, dtype: str, fields: dict) -> KernelRequest:
    """The request of a linear op (conv2d, depthwise_conv2d, fully_connected): float32 with the
    fused activation's clamp, or int8 / int16 (its quantization read from the graph by the kernel)."""
    if dtype == "float32":
        lo, hi = float_activation(node)
        return KernelRequest(f"{kind}_f32", node, {**fields, "act_min": lo, "act_max": hi})
    return KernelRequest(f"{kind}_{'s16' if dtype == 'int16' else 's8'}", node, fields)


def _dot(win: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Exact int64 sum over (KH, KW, C) of int windows [N,OH,OW,KH,KW,C] times OHWI weights.

    Computed in float64, which is exact here: every product and partial sum is an integer
    far below 2**53 (at most 255 * 128 per tap for int8, 32768 * 128 for int16).
    """
    acc = np.tensordot(win.astype(np.float64), w.astype(np.float64), axes=([3, 4, 5], [1, 2, 3]))
    return np.rint(acc).astype(np.int64)
