"""Lowering: each node becomes kernel calls for the target, with its constants precomputed."""

from __future__ import annotations

from codegen.errors import KilnError
from codegen.ir.graph import Graph
from codegen.lower.context import LowerContext
from codegen.ops.registry import get_op
from codegen.targets import Target


def lower_graph(g: Graph, target: Target, optimize: str = "speed",
                reference_stems: frozenset[str] = frozenset(), compact: bool = False) -> LowerContext:
    """Every node's kernel calls and constants; `optimize` (speed, size or ram, as --optimize)
    lets an op choose between a faster and a smaller layout of its tables; `reference_stems`:
    kernels computed by their reference variant whatever the target has (their in-place forms);
    `compact`: the target's kernels without their scratch-hungry fast paths (--ram-limit)."""
    ctx = LowerContext(g, target, optimize)
    ctx.reference_stems = frozenset(reference_stems)
    ctx.compact_kernels = compact
    for node in g.nodes:
        op = get_op(node.op)
        try:
            op.check(node, g)
            op.lower(node, ctx)
        except KilnError as err:
            if err.node is None:
                err.node = node.name
            raise
    return ctx
