"""RMSNorm: y = x / sqrt(mean(x^2) + epsilon) * scale over the trailing axes from `axis` on
(ONNX RMSNormalization); float32. The kernel `layer_norm_f32` without the mean subtraction
(see layer_norm)."""

from __future__ import annotations

import numpy as np

from codegen.ops.common import require_dtypes
from codegen.ops.layer_norm import check_affine, lower_norm, norm_geometry
from codegen.ops.registry import Op, OpKind, register


@register
class RMSNorm(Op):
    name = "RMSNorm"
    kind = OpKind.OPAQUE
    attributes = {"axis": -1, "epsilon": 1e-5}
    arity = (1, 2)
    kernels = ("layer_norm_f32",)

    @classmethod
    def infer(cls, node, ins):
        check_affine(node, ins, ins[0].shape)
        norm_geometry(node, ins[0].shape)
        return [(ins[0].dtype, ins[0].shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        x = args[0]
        _, rows, cols = norm_geometry(node, x.shape)
        r = x.reshape(rows, cols)
        inv = np.float32(1) / np.sqrt((r * r).mean(axis=1, keepdims=True, dtype=np.float32)
                                      + np.float32(node.attrs["epsilon"]))
        y = r * inv.astype(np.float32)
        if len(args) > 1 and args[1] is not None:
            y = y * args[1].reshape(1, cols)
        return [y.astype(np.float32).reshape(x.shape)]

    @classmethod
    def lower(cls, node, ctx):
        lower_norm(node, ctx, rms=True)
