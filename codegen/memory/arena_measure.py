"""The arena a graph would need on a target, measured by lowering and planning it: what the
fusion stage's patch-based search compares its candidates by. The measure is handed to the
fusion planner by the compiler (codegen/compiler.py), so that fusion never reaches forward
into lowering or memory planning itself."""

from __future__ import annotations

from typing import Callable

from codegen.ir.graph import Graph
from codegen.lower import lower_graph
from codegen.lower.band_views import apply_band_views
from codegen.memory.lifetimes import arena_aliases, arena_buffers
from codegen.memory import plan_memory
from codegen.targets import Target

ArenaMeasure = Callable[[Graph], int]


def planned_arena(g: Graph, target: Target) -> int:
    """Arena bytes of `g` as a build would plan it (greedy placement, in-place reuse, band views)."""
    ctx = apply_band_views(lower_graph(g, target))
    buffers = arena_buffers(ctx)
    return plan_memory(buffers, "greedy", aliases=arena_aliases(ctx, buffers)).arena_size


def arena_measure(target: Target) -> ArenaMeasure:
    """`planned_arena` on `target`, as the fusion planner's measure."""
    return lambda g: planned_arena(g, target)
