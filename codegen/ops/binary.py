"""Elementwise binary ops with numpy broadcasting (Add, Sub, Mul): the shared part.

float32: one loop over up to four coalesced dimensions with per-input strides.
int8: TFLite's fixed-point arithmetic (codegen.quant), inputs and output per-tensor quantized.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.lower.context import LowerContext
from codegen.ops.common import (apply_float_activation, broadcast_plan, broadcast_shape,
                                float_activation, require_dtypes)
from codegen.ops.registry import Op, OpKind


class BinaryOp(Op):
    kind = OpKind.BROADCAST
    attributes = {"activation": "none"}
    arity = (2, 2)
    numpy_fn: ClassVar = None
    kernel_stem: ClassVar[str]  # "add" -> kernels add_f32 / add_s8

    @classmethod
    def infer(cls, node, ins):
        a, b = ins
        if a.dtype != b.dtype:
            raise KilnError(f"{node.op} of {a.dtype} and {b.dtype}", node=node.name)
        return [(a.dtype, broadcast_shape(node, a.shape, b.shape))]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        dtype = require_dtypes(node, g, ("float32", "int8"))
        if dtype == "int8":
            cls.check_int8(node, g)

    @classmethod
    def check_int8(cls, node: Node, g: Graph) -> None:
        raise KilnError(f"int8 {node.op} is not supported yet", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        a, b = args
        if a.dtype == np.int8:
            return [cls.reference_int8(node, a, b, g)]
        return [apply_float_activation(cls.numpy_fn(a, b).astype(np.float32), node)]

    @classmethod
    def reference_int8(cls, node: Node, a: np.ndarray, b: np.ndarray, g: Graph) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def loop_params(cls, node: Node, ctx: LowerContext) -> dict:
        g = ctx.g
        out = g.values[node.outputs[0]]
        dims, (sa, sb) = broadcast_plan(node, out.shape, g.values[node.inputs[0]].shape,
                                        g.values[node.inputs[1]].shape)
        return {"dims": dims, "a_strides": sa, "b_strides": sb}

    @classmethod
    def lower(cls, node, ctx):
        a, b = node.inputs
        if ctx.g.values[a].dtype == "float32":
            lo, hi = float_activation(node)
            params = {**cls.loop_params(node, ctx), "act_min": lo, "act_max": hi}
            ctx.call(node, f"{cls.kernel_stem}_f32", params,
                     [ctx.tensor(a), ctx.tensor(b), ctx.tensor(node.outputs[0])])
        else:
            cls.lower_int8(node, ctx)

    @classmethod
    def lower_int8(cls, node: Node, ctx: LowerContext) -> None:
        raise NotImplementedError
