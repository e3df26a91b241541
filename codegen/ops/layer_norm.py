"""LayerNorm: normalise over the trailing axes from `axis` on, then scale and shift (ONNX
LayerNormalization); float32.

y = (x - mean) / sqrt(var + epsilon) * scale + bias, with the mean and the (biased) variance
of each row of the input viewed as [rows, cols] (rows: the axes before `axis`). scale and
bias broadcast to the normalised shape (the frontend expands constant ones to a full row).
With `with_stats` the node has two more outputs, the mean and 1 / sqrt(var + epsilon) of
each row, shaped like x with the normalised axes set to 1 (ONNX's Mean and InvStdDev).
The kernel `layer_norm_f32` (two passes per row: mean, then variance) is shared with RMSNorm.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.softmax import normalized_axis


def norm_geometry(node, shape) -> tuple[int, int, int]:
    """(axis, rows, cols) of a normalisation over the axes from `axis` on."""
    axis = normalized_axis(node, len(shape))
    return axis, int(np.prod(shape[:axis], dtype=np.int64)), int(np.prod(shape[axis:], dtype=np.int64))


def check_affine(node, ins, shape) -> None:
    """scale (and bias) must be float32 of the normalised row's size (broadcast already)."""
    axis = normalized_axis(node, len(shape))
    row = tuple(shape[axis:])
    for role, v in zip(("scale", "bias"), ins[1:]):
        if v is not None and (v.dtype != "float32" or v.size != int(np.prod(row, dtype=np.int64))):
            raise KilnError(f"{node.op} {role} {v.type_str()} must hold one float32 per element of the "
                            f"normalised shape {list(row)}", node=node.name)


def lower_norm(node, ctx, rms: bool) -> None:
    g = ctx.g
    x = node.inputs[0]
    _, rows, cols = norm_geometry(node, g.values[x].shape)
    ins = node.inputs + [""] * (3 - len(node.inputs))
    scale = ctx.tensor(ins[1]) if ins[1] else ctx.constant(node, "ones", np.ones(cols), "float32")
    bias = ctx.tensor(ins[2]) if ins[2] else ctx.constant(node, "zeros", np.zeros(cols), "float32")
    stats = [ctx.tensor(o) for o in node.outputs[1:]] or [ScratchArg(4 * rows), ScratchArg(4 * rows)]
    ctx.request(KernelRequest("layer_norm_f32", node, {"rows": rows, "cols": cols,
                                                       "epsilon": float(node.attrs["epsilon"]), "rms": rms},
                              (ctx.tensor(x), scale, bias, ctx.tensor(node.outputs[0]), *stats), ("math.h",)))


@register
class LayerNorm(Op):
    name = "LayerNorm"
    kind = OpKind.OPAQUE
    attributes = {"axis": -1, "epsilon": 1e-5, "with_stats": False}
    arity = (1, 3)
    kernels = ("layer_norm_f32",)

    @classmethod
    def infer(cls, node, ins):
        x = ins[0]
        check_affine(node, ins, x.shape)
        axis, _, _ = norm_geometry(node, x.shape)
        out = [(x.dtype, x.shape)]
        if node.attrs["with_stats"]:
            stat = tuple(d if i < axis else 1 for i, d in enumerate(x.shape))
            out += [("float32", stat), ("float32", stat)]
        return out

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def reference(cls, node, args, g):
        x = args[0]
        axis, rows, cols = norm_geometry(node, x.shape)
        r = x.reshape(rows, cols)
        mean = r.mean(axis=1, keepdims=True, dtype=np.float32)
        d = r - mean
        inv = (np.float32(1) / np.sqrt((d * d).mean(axis=1, keepdims=True, dtype=np.float32)
                                       + np.float32(node.attrs["epsilon"]))).astype(np.float32)
        y = d * inv
        if len(args) > 1 and args[1] is not None:
            y = y * args[1].reshape(1, cols)
        if len(args) > 2 and args[2] is not None:
            y = y + args[2].reshape(1, cols)
        out = [y.astype(np.float32).reshape(x.shape)]
        if node.attrs["with_stats"]:
            stat = g.values[node.outputs[1]].shape
            out += [mean.reshape(stat), inv.reshape(stat)]
        return out

    @classmethod
    def lower(cls, node, ctx):
        lower_norm(node, ctx, rms=False)
