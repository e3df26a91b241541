"""GroupConv2D: a 2-D convolution whose channels are split into `groups` independent groups
(ONNX Conv with 1 < group < C, ResNeXt / ShuffleNet style); float32.

Input x[N,H,W,C], weights [O,KH,KW,C/groups] (Conv2D's OHWI layout per group), optional bias
[O]; output channel oc belongs to group oc // (O / groups) and reads that group's C / groups
input channels. Geometry (strides, dilations, explicit pads) and fused activation as Conv2D.
Conv2D is the groups = 1 case and DepthwiseConv2D the groups = C one; both have int8 kernels.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import float_activation, require_dtypes
from codegen.ops.conv2d import check_bias_shape, check_float_linear, float_bias_arg, float_linear_result
from codegen.ops.conv_geometry import conv_geometry, windows
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


def _groups(node, x_shape, w_shape) -> int:
    groups = node.attrs["groups"]
    if not isinstance(groups, (int, np.integer)) or groups < 1 or x_shape[3] % groups or w_shape[0] % groups \
            or w_shape[3] * groups != x_shape[3]:
        raise KilnError(f"GroupConv2D with {groups!r} groups: input channels {x_shape[3]}, weights "
                        f"{list(w_shape)} do not match", node=node.name)
    return int(groups)


@register
class GroupConv2D(Op):
    name = "GroupConv2D"
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes = {"strides": (1, 1), "dilations": (1, 1), "pads": (0, 0, 0, 0), "groups": 1,
                  "activation": "none"}
    arity = (2, 3)
    kernels = ("group_conv2d_f32",)

    @classmethod
    def infer(cls, node, ins):
        x, w = ins[0], ins[1]
        b = ins[2] if len(ins) > 2 else None
        if w is None or len(w.shape) != 4:
            raise KilnError("GroupConv2D weights must be 4-D [O,KH,KW,C/groups]", node=node.name)
        geom = conv_geometry(node, x.shape, w.shape[1:3])
        _groups(node, x.shape, w.shape)
        check_bias_shape(node, b, w.shape[0])
        return [(x.dtype, (geom.batches, geom.out_h, geom.out_w, w.shape[0]))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))
        check_float_linear(node, g)

    @classmethod
    def macs(cls, node, g):
        y, w = g.values[node.outputs[0]], g.values[node.inputs[1]]
        return y.size * w.shape[1] * w.shape[2] * w.shape[3]

    @classmethod
    def reference(cls, node, args, g):
        x, w = args[0], args[1]
        geom = conv_geometry(node, x.shape, w.shape[1:3])
        groups = _groups(node, x.shape, w.shape)
        cg, og = w.shape[3], w.shape[0] // groups
        win = windows(x.astype(np.float64), geom, 0.0)
        parts = [np.tensordot(win[..., k * cg:(k + 1) * cg], w[k * og:(k + 1) * og].astype(np.float64),
                              axes=([3, 4, 5], [1, 2, 3])) for k in range(groups)]
        acc = np.concatenate(parts, axis=3)
        return [float_linear_result(acc, args, node)]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        x, w = node.inputs[0], node.inputs[1]
        wv = g.values[w]
        geom = conv_geometry(node, g.values[x].shape, wv.shape[1:3])
        groups = _groups(node, g.values[x].shape, wv.shape)
        lo, hi = float_activation(node)
        params = {**geom.params(), "in_c": g.values[x].shape[3], "out_c": wv.shape[0],
                  "group_in_c": wv.shape[3], "group_out_c": wv.shape[0] // groups, "act_min": lo, "act_max": hi}
        ctx.request(KernelRequest("group_conv2d_f32", node, params, (ctx.tensor(x), ctx.tensor(w),
                                  float_bias_arg(node, ctx, wv.shape[0]), ctx.tensor(node.outputs[0]))))
