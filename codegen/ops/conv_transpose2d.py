"""ConvTranspose2D: the transpose (gradient) of a 2-D convolution, "deconvolution" (ONNX
ConvTranspose, TFLite TRANSPOSE_CONV); float32, and int8 as TFLite Micro's TRANSPOSE_CONV
(int32 sums of (x - input zero point) * w, plus the int32 bias, requantized per output channel;
one group, no dilation, no fused activation: TFLite Micro's kernel has none of them); int16
as its 16x8 kernel (int16 activations with zero point 0, int8 weights, int64 bias and sums,
the int64 output stage, clamped to the fused activation's range).

Input x[N,H,W,C], weights [O,KH,KW,C/groups] (OHWI per group, as GroupConv2D; the frontend
repacks ONNX's [C,O/groups,KH,KW]), optional bias [O]. Every input pixel (iy, ix) adds
x * w[.., ky, kx, ..] to the full output at (iy * stride + ky * dilation); the output is
that full map of (H - 1) * stride + (KH - 1) * dilation + 1 rows cropped by `pads`
(top, left, bottom, right). A negative pad extends the output with rows that receive no
tap (ONNX's output_padding and output_shape become such pads in the frontend).

The kernel gathers instead of scattering: output (oy, ox) sums the taps whose input
position (oy + pad_top - ky * dilation) / stride is whole and inside the image. TFLite
Micro's int8 and 16x8 kernels scatter into an int32 / int64 scratch map instead; integer sums
do not depend on the order, so the gathering kernels need no scratch and give the same bits.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import float_activation, require_dtypes
from codegen.ops.conv2d import check_bias_shape, check_float_linear, float_bias_arg, float_linear_result
from codegen.ops.int8_linear import check_int8_linear, check_int16_linear
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.linear import bias_or_zero, linear_int8_params, requantize, requantize_s16


def _ints(node, key, count):
    values = tuple(int(v) for v in node.attrs[key])
    if len(values) != count:
        raise KilnError(f"ConvTranspose2D {key} {list(values)} must have {count} values", node=node.name)
    return values


def geometry(node, x_shape, w_shape) -> dict:
    """The kernel's size fields; refuses bad strides, groups or an empty output."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise KilnError("ConvTranspose2D takes NHWC input and [O,KH,KW,C/groups] weights", node=node.name)
    n, h, w, c = x_shape
    o, kh, kw, cg = w_shape
    sh, sw = _ints(node, "strides", 2)
    dh, dw = _ints(node, "dilations", 2)
    top, left, bottom, right = _ints(node, "pads", 4)
    groups = int(node.attrs["groups"])
    if min(sh, sw, dh, dw) < 1 or groups < 1 or c % groups or o % groups or cg * groups != c:
        raise KilnError(f"ConvTranspose2D strides {[sh, sw]}, dilations {[dh, dw]}, {groups} groups do not fit "
                        f"input channels {c} and weights {list(w_shape)}", node=node.name)
    out_h = (h - 1) * sh + (kh - 1) * dh + 1 - top - bottom
    out_w = (w - 1) * sw + (kw - 1) * dw + 1 - left - right
    if out_h < 1 or out_w < 1:
        raise KilnError(f"ConvTranspose2D pads {[top, left, bottom, right]} leave no output", node=node.name)
    return {"batches": n, "in_h": h, "in_w": w, "out_h": out_h, "out_w": out_w, "k_h": kh, "k_w": kw,
            "stride_h": sh, "stride_w": sw, "dilation_h": dh, "dilation_w": dw, "pad_top": top,
            "pad_left": left, "in_c": c, "out_c": o, "group_in_c": cg, "group_out_c": o // groups}


@register
class ConvTranspose2D(Op):
    name = "ConvTranspose2D"
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes = {"strides": (1, 1), "dilations": (1, 1), "pads": (0, 0, 0, 0), "groups": 1,
                  "activation": "none"}
    arity = (2, 3)
    kernels = ("conv_transpose2d_f32", "conv_transpose2d_s8", "conv_transpose2d_s16")

    @classmethod
    def infer(cls, node, ins):
        x, w = ins[0], ins[1]
        geo = geometry(node, x.shape, w.shape)
        check_bias_shape(node, ins[2] if len(ins) > 2 else None, w.shape[0])
        return [(x.dtype, (geo["batches"], geo["out_h"], geo["out_w"], geo["out_c"]))]

    @classmethod
    def check(cls, node, g):
        kind = require_dtypes(node, g, ("float32", "int8", "int16"))
        if kind == "float32":
            check_float_linear(node, g)
            return
        w = g.values[node.inputs[1]]
        if int(node.attrs["groups"]) != 1 or tuple(node.attrs["dilations"]) != (1, 1):
            raise KilnError(f"{kind} ConvTranspose2D with groups or dilations has no kernel (TFLite has neither)",
                            node=node.name)
        if kind == "int16":  # every output sums at most the taps of one weight row
            check_int16_linear(node, g, 0, w.shape[0], w.data.reshape(w.shape[0], -1))
            return
        if node.attrs["activation"] != "none":
            raise KilnError(f"int8 ConvTranspose2D with a fused {node.attrs['activation']} is not supported "
                            "(TFLite Micro's int8 TRANSPOSE_CONV clamps to the int8 range only)", node=node.name)
        check_int8_linear(node, g, 0, w.shape[0])

    @classmethod
    def macs(cls, node, g):
        x, w = g.values[node.inputs[0]], g.values[node.inputs[1]]
        return x.size // x.shape[3] * w.shape[0] * w.shape[1] * w.shape[2] * w.shape[3]

    @classmethod
    def reference(cls, node, args, g):
        if args[0].dtype == np.int8:
            return [cls._reference_int8(node, args, g)]
        if args[0].dtype == np.int16:  # zero points 0: exact sums, TFLM's int64 output stage
            channels = args[1].shape[0]
            acc = cls._full_sum(node, args[0].astype(np.float64), args[1].astype(np.float64))
            return [requantize_s16(np.rint(acc).astype(np.int64) + bias_or_zero(args, channels),
                                   linear_int8_params(node, g, channels))]
        x, w = args[0].astype(np.float64), args[1].astype(np.float64)
        return [float_linear_result(cls._full_sum(node, x, w), args, node)]

    @classmethod
    def _reference_int8(cls, node, args, g):
        channels = args[1].shape[0]
        p = linear_int8_params(node, g, channels)
        # integer sums below 2**53 (int16 too: check_int16_linear bounds them by 2**47): exact in
        # float64, the order does not matter
        acc = cls._full_sum(node, args[0].astype(np.float64) - p.input_zp, args[1].astype(np.float64))
        return requantize(acc.astype(np.int64) + bias_or_zero(args, channels), p)

    @classmethod
    def _full_sum(cls, node, x, w):
        """The cropped output before bias and activation, in float64."""
        p = geometry(node, x.shape, w.shape)
        groups = p["in_c"] // p["group_in_c"]
        cg, og = p["group_in_c"], p["group_out_c"]
        full_h = (p["in_h"] - 1) * p["stride_h"] + (p["k_h"] - 1) * p["dilation_h"] + 1
        full_w = (p["in_w"] - 1) * p["stride_w"] + (p["k_w"] - 1) * p["dilation_w"] + 1
        full = np.zeros((p["batches"], full_h, full_w, p["out_c"]))
        for ky in range(p["k_h"]):
            for kx in range(p["k_w"]):
                y0, x0 = ky * p["dilation_h"], kx * p["dilation_w"]
                rows = slice(y0, y0 + (p["in_h"] - 1) * p["stride_h"] + 1, p["stride_h"])
                cols = slice(x0, x0 + (p["in_w"] - 1) * p["stride_w"] + 1, p["stride_w"])
                for k in range(groups):
                    tap = x[..., k * cg:(k + 1) * cg] @ w[k * og:(k + 1) * og, ky, kx, :].T
                    full[:, rows, cols, k * og:(k + 1) * og] += tap
        out = np.zeros((p["batches"], p["out_h"], p["out_w"], p["out_c"]))
        top, left = p["pad_top"], p["pad_left"]
        ys = np.arange(p["out_h"]) + top
        xs = np.arange(p["out_w"]) + left
        vy, vx = (ys >= 0) & (ys < full_h), (xs >= 0) & (xs < full_w)  # rows past the full map stay 0
        out[:, np.flatnonzero(vy)[:, None], np.flatnonzero(vx)[None, :]] = full[:, ys[vy][:, None], xs[vx][None, :]]
        return out

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        x, w = node.inputs[0], node.inputs[1]
        wv = g.values[w]
        if wv.dtype == "int8":
            cls._lower_quantized(node, ctx)
            return
        lo, hi = float_activation(node)
        params = {**geometry(node, g.values[x].shape, wv.shape), "act_min": lo, "act_max": hi}
        b = node.inputs[2] if len(node.inputs) > 2 else ""
        if wv.is_const and (not b or g.values[b].is_const):
            # constant weights and bias: the kernel lays them out (codegen/kernels/*/conv_transpose2d_f32.py)
            ctx.request(KernelRequest("conv_transpose2d_f32", node, params))
            return
        ctx.request(KernelRequest("conv_transpose2d_f32", node, params, (ctx.tensor(x), ctx.tensor(w),
                                  float_bias_arg(node, ctx, wv.shape[0]), ctx.tensor(node.outputs[0]))))

    @classmethod
    def _lower_quantized(cls, node, ctx):
        """int8 and 16x8 (one group): the geometry; the kernel lays out TFLM's per-channel
        output stage and the bias for its own loop (codegen/kernels/*/conv_transpose2d*.py)."""
        g = ctx.g
        x, w = g.values[node.inputs[0]], g.values[node.inputs[1]]
        geo = geometry(node, x.shape, w.shape)
        del geo["group_in_c"], geo["group_out_c"]
        ctx.request(KernelRequest("conv_transpose2d_s16" if x.dtype == "int16" else "conv_transpose2d_s8", node, geo,
                                  headers=("kiln_fixedpoint.h",)))
