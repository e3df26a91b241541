"""Elementwise ops on two broadcast tensors without fused activation: float functions (Div,
Pow, Minimum, Maximum, Mod, PRelu), comparisons (Equal, Less, ...) and logic (And, Or, Xor).

Each op's C expression of `a` and `b` is one macro of
templates/kernels/reference/_elementwise_exprs.c.j2, run by the `broadcast2` kernel family
(codegen/kernels/reference/families.py) and by fused elementwise chains; one kernel per
input dtype, `<stem>_f32`, `_i8`, `_u8`, `_i16`, `_u16`, `_i32`, `_u32`, `_i64`, `_u64` or `_b8`. bool tensors hold one byte per element,
0 or 1 (uint8_t in C).
"""

from __future__ import annotations

from typing import ClassVar, Sequence

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ir.types import C_SUFFIX, INTEGER_DTYPES
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import broadcast_plan, broadcast_shape
from codegen.ops.registry import Op, OpKind

SUFFIX = C_SUFFIX
INTEGERS = INTEGER_DTYPES


def kernel_names(stem: str, dtypes: Sequence[str]) -> tuple[str, ...]:
    """The kernels `<stem>_f32`, `<stem>_i8`, ... of an op computing these input dtypes."""
    return tuple(f"{stem}_{SUFFIX[d]}" for d in dtypes)


class BroadcastBinaryOp(Op):
    kind = OpKind.BROADCAST
    arity = (2, 2)
    attributes: ClassVar[dict] = {}
    dtypes: ClassVar[tuple[str, ...]] = ("float32",)
    out_dtype: ClassVar[str | None] = None  # None: the inputs' dtype
    kernel_stem: ClassVar[str]
    headers: ClassVar[tuple[str, ...]] = ()
    numpy_fn: ClassVar = None

    @classmethod
    def infer(cls, node, ins):
        a, b = ins
        if a.dtype != b.dtype:
            raise KilnError(f"{node.op} of {a.dtype} and {b.dtype}", node=node.name)
        return [(cls.out_dtype or a.dtype, broadcast_shape(node, a.shape, b.shape))]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        dtype = g.values[node.inputs[0]].dtype
        if dtype not in cls.dtypes:
            raise KilnError(f"{node.op} on {dtype} is not supported (supported: {', '.join(cls.dtypes)})",
                            node=node.name)
        if dtype == "int8":  # raw comparisons and selections are right only on one scale
            names = list(node.inputs) + ([] if cls.out_dtype else [node.outputs[0]])
            quants = {g.values[n].quant for n in names}
            if len(quants) > 1:
                raise KilnError(f"int8 {node.op} needs one quantization on {', '.join(names)}", node=node.name)

    @classmethod
    def fn(cls, node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return cls.numpy_fn(a, b)

    @classmethod
    def kernel(cls, node: Node, dtype: str) -> str:
        return f"{cls.kernel_stem}_{SUFFIX[dtype]}"

    @classmethod
    def float_expr(cls, node: Node) -> str | None:
        """The name of the float32 expression (templates/kernels/reference/_elementwise_exprs.c.j2)
        a fused elementwise chain runs for this node; None when it has none (a bool result)."""
        return cls.kernel_stem if "float32" in cls.dtypes and cls.out_dtype is None else None

    @classmethod
    def reference(cls, node, args, g):
        a, b = args
        out = g.values[node.outputs[0]]
        with np.errstate(all="ignore"):
            result = np.asarray(cls.fn(node, a, b)).astype(np.bool_ if out.dtype == "bool" else out.dtype)
        return [np.array(np.broadcast_to(result, out.shape))]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        g = ctx.g
        a, b = node.inputs
        dims, (sa, sb) = broadcast_plan(node, g.values[node.outputs[0]].shape, g.values[a].shape,
                                        g.values[b].shape)
        ctx.request(KernelRequest(cls.kernel(node, g.values[a].dtype), node,
                                  {"dims": dims, "a_strides": sa, "b_strides": sb},
                                  (ctx.tensor(a), ctx.tensor(b), ctx.tensor(node.outputs[0])), tuple(cls.headers)))


class BoolResultOp(BroadcastBinaryOp):
    """Comparisons and logic: a bool result."""

    out_dtype = "bool"
    dtypes = ("float32", *INTEGERS)
