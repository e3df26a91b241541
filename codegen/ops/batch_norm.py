"""BatchNorm: inference-mode batch normalization (ONNX BatchNormalization), float32.

y = (x - mean) / sqrt(var + epsilon) * scale + bias along the channel axis `axis`. With
constant statistics this is one multiply-add per element, y = x * k + s, where
k = scale / sqrt(var + epsilon) and s = bias - mean * k are computed once at compile time
(in double, then rounded to float32, as onnxruntime folds them in float32). The numpy
reference uses the same k and s, so the generated C matches it to the bit.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


def channel_axis(node, rank: int) -> int:
    axis = int(node.attrs["axis"])
    if not -rank <= axis < rank:
        raise KilnError(f"axis {axis} is out of range for rank {rank}", node=node.name)
    return axis % rank


def fold(node, scale, bias, mean, var) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel (k, s) of y = x * k + s, float32."""
    eps = float(node.attrs["epsilon"])
    k = np.asarray(scale, np.float64) / np.sqrt(np.asarray(var, np.float64) + eps)
    s = np.asarray(bias, np.float64) - np.asarray(mean, np.float64) * k
    return k.astype(np.float32), s.astype(np.float32)


@register
class BatchNorm(Op):
    name = "BatchNorm"
    kind = OpKind.BROADCAST  # per-channel constants broadcast over the other axes
    attributes = {"epsilon": 1e-5, "axis": 1}
    arity = (5, 5)
    kernels = ("batch_norm_f32",)

    @classmethod
    def infer(cls, node, ins):
        x = ins[0]
        if any(v is None for v in ins):
            raise KilnError("BatchNorm needs x, scale, bias, mean and var", node=node.name)
        channels = x.shape[channel_axis(node, len(x.shape))]
        for role, v in zip(("scale", "bias", "mean", "var"), ins[1:]):
            if v.size != channels or v.dtype != x.dtype:
                raise KilnError(f"BatchNorm {role} is {v.type_str()}, expected {x.dtype}[{channels}]",
                                node=node.name)
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))
        for name in node.inputs[1:]:
            if not g.values[name].is_const:
                raise KilnError(f"BatchNorm parameter '{name}' is not a constant", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        x = args[0]
        axis = channel_axis(node, x.ndim)
        k, s = fold(node, *[a.reshape(-1) for a in args[1:]])
        shape = [1] * x.ndim
        shape[axis] = -1
        return [(x * k.reshape(shape) + s.reshape(shape)).astype(np.float32)]

    @classmethod
    def lower(cls, node, ctx):
        g = ctx.g
        x = g.values[node.inputs[0]]
        axis = channel_axis(node, len(x.shape))
        k, s = fold(node, *[g.values[n].data.reshape(-1) for n in node.inputs[1:]])
        params = {
            "outer": int(np.prod(x.shape[:axis], dtype=np.int64)),
            "channels": int(x.shape[axis]),
            "inner": int(np.prod(x.shape[axis + 1:], dtype=np.int64)),
            "mul": ctx.constant(node, "mul", k, "float32"),
            "add": ctx.constant(node, "add", s, "float32"),
        }
        ctx.request(KernelRequest("batch_norm_f32", node, params,
                                  (ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0]))))
