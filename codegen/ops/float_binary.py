"""Elementwise float32 functions of two broadcast tensors (Div, Pow, Min, Max, Mod, PRelu).

They extend `binary.BinaryOp` (numpy broadcasting, fused activation, the loop of
`_binary_f32.c.j2`) with float32 only: each op's template is one line naming its C
expression of `a[i3 * sa]` and `b[i3 * sb]`, so that no C is copied between ops.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.lower.context import LowerContext
from codegen.ops.binary import BinaryOp
from codegen.ops.common import apply_float_activation, check_activation, float_activation, require_dtypes


class FloatBinaryOp(BinaryOp):
    headers: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        require_dtypes(node, g, ("float32",))
        check_activation(node)

    @classmethod
    def kernel(cls, node: Node) -> str:
        return f"{cls.kernel_stem}_f32"

    @classmethod
    def fn(cls, node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return cls.numpy_fn(a, b)

    @classmethod
    def reference(cls, node, args, g):
        a, b = args
        with np.errstate(all="ignore"):
            out = np.asarray(cls.fn(node, a, b)).astype(np.float32)
        out = np.broadcast_to(out, g.values[node.outputs[0]].shape)
        return [np.ascontiguousarray(apply_float_activation(out, node))]

    @classmethod
    def lower(cls, node, ctx: LowerContext):
        lo, hi = float_activation(node)
        params = {**cls.loop_params(node, ctx), "act_min": lo, "act_max": hi}
        a, b = node.inputs
        ctx.call(node, cls.kernel(node), params, [ctx.tensor(a), ctx.tensor(b), ctx.tensor(node.outputs[0])],
                 headers=cls.headers)
