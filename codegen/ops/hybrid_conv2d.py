"""HybridConv2D: TFLite's hybrid (dynamic-range quantized) CONV_2D, float32 in and out with
constant int8 weights, which stay int8 in flash.

LiteRT's builtin kernel (tflite/kernels/conv.cc EvalHybrid / EvalHybridPerChannel) runs it as:
  per batch b, quantize the float input to int8 (codegen/ops/hybrid_quant.py):
    symmetric (zero point 0) when the weights have one scale (or all scales equal),
    asymmetric (zero point zp_b) when the per-channel weight scales differ;
  acc = sum over the taps inside the image of (q - zp_b) * w           (int32, exact)
  y   = float(acc) * float(input_scale_b * w_scale[c]) + bias[c]      (float32, this order)
  y   = clamp(y, fused activation)
Padding taps contribute nothing (LiteRT's im2col fills them with the zero point).

Attributes are Conv2D's. The numpy reference is bit-exact with LiteRT's builtin kernels on
x86-64. It is not the XNNPACK delegate's result: LiteRT's default delegate runs hybrid
convolutions with its own asymmetric per-image quantization: about 1e-2 relative away
on one convolution, 4e-2 on the MLPerf Tiny KWS model.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.ops.common import apply_float_activation, check_activation, float_activation
from codegen.ops.conv2d import float_bias_arg, ohwi_geometry, ohwi_output_shape
from codegen.ops.conv_geometry import windows
from codegen.ops.hybrid_quant import hybrid_scales, quantize_asymmetric, quantize_symmetric
from codegen.ops.registry import Op, OpKind, register

INT32_MAX = (1 << 31) - 1
# |q - zp| is at most 127 (symmetric) or 255 (asymmetric: q and zp both in [-128, 127]).
_MAX_CODE = {False: 127, True: 255}


def weight_scales(node: Node, g: Graph) -> tuple[bool, np.ndarray]:
    """(asymmetric input quantization, float32 weight scales): one scale per output channel
    on the asymmetric path, the single scale LiteRT uses on the symmetric one."""
    w = g.values[node.inputs[1]]
    asymmetric, scales = hybrid_scales(w.quant.scale)
    return asymmetric, (scales if asymmetric else scales[:1])


@register
class HybridConv2D(Op):
    name = "HybridConv2D"
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes = {"strides": (1, 1), "dilations": (1, 1), "pads": (0, 0, 0, 0), "activation": "none"}
    arity = (2, 3)
    kernels = ("hybrid_conv2d_f32",)

    @classmethod
    def infer(cls, node, ins):
        return [("float32", ohwi_output_shape(node, ins))]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        """float32 input/output/bias, constant symmetric int8 weights per tensor or per output
        channel, and an int32 accumulator that cannot overflow."""
        x, w = node.inputs[0], node.inputs[1]
        b = node.inputs[2] if len(node.inputs) > 2 else ""
        for name, role in ((x, "input"), (node.outputs[0], "output"), (b, "bias")):
            if name and g.values[name].dtype != "float32":
                raise KilnError(f"HybridConv2D needs a float32 {role}, '{name}' is "
                                f"{g.values[name].dtype}", node=node.name)
        if b and not g.values[b].is_const:
            raise KilnError(f"HybridConv2D needs a constant bias, '{b}' is computed at run time",
                            node=node.name)
        check_activation(node)
        wv = g.values[w]
        if wv.dtype != "int8" or not wv.is_const:
            raise KilnError(f"HybridConv2D needs constant int8 weights, '{w}' is "
                            f"{'a constant ' if wv.is_const else 'a computed '}{wv.dtype}",
                            node=node.name)
        q = wv.quant
        if q is None:
            raise KilnError(f"int8 weights '{w}' have no quantization parameters", node=node.name)
        if q.per_channel and (q.axis != 0 or len(q.scale) != wv.shape[0]):
            raise KilnError(f"weights '{w}' are quantized along axis {q.axis} with {len(q.scale)} "
                            f"scales; HybridConv2D needs {wv.shape[0]} scales along axis 0",
                            node=node.name)
        if any(z != 0 for z in q.zero_point):
            raise KilnError(f"weights '{w}' are not symmetric (zero point "
                            f"{next(z for z in q.zero_point if z)}); HybridConv2D needs zero point 0",
                            node=node.name)
        asymmetric, _ = hybrid_scales(q.scale)
        worst = int(np.abs(wv.data.astype(np.int64)).reshape(wv.shape[0], -1).sum(axis=1).max())
        if worst * _MAX_CODE[asymmetric] > INT32_MAX:
            raise KilnError(f"HybridConv2D window of {wv.size // wv.shape[0]} taps could overflow "
                            "the int32 accumulator", node=node.name)

    @classmethod
    def macs(cls, node: Node, g: Graph) -> int:
        y, w = g.values[node.outputs[0]], g.values[node.inputs[1]]
        return y.size * w.shape[1] * w.shape[2] * w.shape[3]

    @classmethod
    def reference(cls, node, args, g):
        x, w = args[0], args[1]
        geom = ohwi_geometry(node, x.shape, w.shape)
        asymmetric, w_scale = weight_scales(node, g)
        quantize = quantize_asymmetric if asymmetric else quantize_symmetric
        bias = args[2] if len(args) > 2 and args[2] is not None else np.zeros(w.shape[0], np.float32)
        out = np.empty((geom.batches, geom.out_h, geom.out_w, w.shape[0]), np.float32)
        for n in range(geom.batches):
            qi = quantize(x[n])
            codes = qi.codes.astype(np.int64)[None] - qi.zero_point
            acc = _exact_dot(windows(codes, geom, 0)[0], w)  # padding taps add 0
            scale = (w_scale * qi.scale).astype(np.float32)
            y = (acc.astype(np.float32) * scale).astype(np.float32)
            out[n] = (y + bias.astype(np.float32)).astype(np.float32)
        return [apply_float_activation(out, node)]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        x, w = node.inputs[0], node.inputs[1]
        wv = g.values[w]
        geom = ohwi_geometry(node, g.values[x].shape, wv.shape)
        channels = wv.shape[0]
        asymmetric, w_scale = weight_scales(node, g)
        act_min, act_max = float_activation(node)
        params = {**geom.params(), "in_c": wv.shape[3], "out_c": channels,
                  "asymmetric": asymmetric, "act_min": act_min, "act_max": act_max,
                  "w_scale": ctx.constant(node, "w_scale", w_scale, "float32"),
                  "w_scale_step": 1 if asymmetric else 0}
        batch_codes = geom.in_h * geom.in_w * wv.shape[3]  # one batch, quantized
        ctx.request(KernelRequest("hybrid_conv2d_f32", node, params,
                                  (ctx.tensor(x), ctx.tensor(w), float_bias_arg(node, ctx, channels),
                                   ctx.tensor(node.outputs[0]), ScratchArg(batch_codes)), ("kiln_hybrid.h",)))


def _exact_dot(win: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Exact int64 sum over (KH, KW, C) of integer windows [OH,OW,KH,KW,C] times OHWI weights.

    Computed in float64, exact here: every partial sum is an integer below 2**53."""
    acc = np.tensordot(win.astype(np.float64), w.astype(np.float64), axes=([2, 3, 4], [1, 2, 3]))
    return np.rint(acc).astype(np.int64)
