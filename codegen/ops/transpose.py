"""Transpose: permute the axes of a tensor (ONNX Transpose, TFLite TRANSPOSE).

Any dtype: the kernel moves bytes. At compile time the permutation is simplified: size-1
axes are dropped and runs of axes that stay adjacent (and in order) merge into one, so the
kernel walks at most MAX_DIMS loops with an input byte stride each and copies a contiguous
chunk per step (the whole innermost run when the last input axis stays last). A permutation
that moves no data is a reshape: a view, or one copy. int8 never requantizes (TFLM's
TRANSPOSE copies the bytes), so the output must carry the input's quantization.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.ops.common import quant_of
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.ops.reshape import emit_copy

MAX_DIMS = 6


def permutation(node, rank: int) -> tuple[int, ...]:
    """The node's `perm`, or reversed axes when empty (ONNX's default)."""
    perm = tuple(int(p) for p in node.attrs["perm"]) or tuple(reversed(range(rank)))
    if sorted(p % rank if rank else p for p in perm) != list(range(rank)) or len(perm) != rank:
        raise KilnError(f"perm {list(perm)} is not a permutation of {rank} axes", node=node.name)
    return tuple(p % rank for p in perm)


def transpose_plan(shape: tuple[int, ...], perm: tuple[int, ...], itemsize: int
                   ) -> tuple[list[int], list[int], int]:
    """(dims, input byte strides, chunk bytes) of the copy loop, outermost first.

    The output is written in order; loop k advances the input by strides[k] bytes, and each
    innermost step copies `chunk` contiguous bytes.
    """
    in_strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    groups: list[list[int]] = []  # runs of input axes that stay adjacent, in output order
    for axis in perm:
        if shape[axis] == 1:
            continue  # size-1 axes move no data, wherever they go
        if groups and groups[-1][-1] < axis and all(shape[a] == 1 for a in range(groups[-1][-1] + 1, axis)):
            groups[-1].append(axis)
        else:
            groups.append([axis])
    dims = [int(np.prod([shape[a] for a in grp], dtype=np.int64)) for grp in groups]
    strides = [in_strides[grp[-1]] * itemsize for grp in groups]
    chunk = itemsize
    if groups and strides[-1] == itemsize:
        chunk = dims.pop() * itemsize
        strides.pop()
    return dims, strides, chunk


@register
class Transpose(Op):
    name = "Transpose"
    kind = OpKind.INJECTIVE
    attributes = {"perm": ()}
    arity = (1, 1)
    kernels = ("transpose", "copy")

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        perm = permutation(node, len(x.shape))
        return [(x.dtype, tuple(x.shape[p] for p in perm))]

    @classmethod
    def check(cls, node, g):
        x = g.values[node.inputs[0]]
        if x.dtype == "int8":
            qi, qo = quant_of(g, node.inputs[0], node), quant_of(g, node.outputs[0], node)
            if qi.per_channel or (qi.scale, qi.zero_point) != (qo.scale, qo.zero_point):
                raise KilnError("int8 Transpose must keep its input's per-tensor quantization "
                                "(TFLM's TRANSPOSE does not requantize)", node=node.name)
        dims, _, _ = transpose_plan(x.shape, permutation(node, len(x.shape)),
                                    np_dtype(x.dtype).itemsize)
        if len(dims) > MAX_DIMS:
            raise KilnError(f"Transpose moves {len(dims)} independent axes (at most {MAX_DIMS})",
                            node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        return [np.ascontiguousarray(np.transpose(x, permutation(node, x.ndim)))]

    @classmethod
    def lower(cls, node, ctx):
        src, out = node.inputs[0], node.outputs[0]
        x = ctx.g.values[src]
        dims, strides, chunk = transpose_plan(x.shape, permutation(node, len(x.shape)),
                                              np_dtype(x.dtype).itemsize)
        if not dims:  # the data does not move
            if not ctx.alias(out, src):
                emit_copy(node, ctx, src, out)
            return
        pad = MAX_DIMS - len(dims)
        ctx.request(KernelRequest("transpose", node, {"dims": (1,) * pad + tuple(dims),
                                                      "in_strides": (0,) * pad + tuple(strides), "chunk": chunk}))
