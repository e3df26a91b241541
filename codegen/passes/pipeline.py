"""The optimisation pipeline: a plain list of passes, run in order."""

from __future__ import annotations

from typing import Callable

from codegen.ir.graph import Graph
from codegen.ir.verifier import verify_graph
from codegen.memory.schedule import schedule_for_memory
from codegen.passes.dce import eliminate_dead_code

Pass = Callable[[Graph], Graph]

PIPELINE: list[tuple[str, Pass]] = [
    # Drop whatever no output depends on, so no kernel or weight is emitted for it.
    ("dce", eliminate_dead_code),
    # Last: choose the execution order of branching graphs that needs the least RAM (exact for
    # small graphs, greedy past a bound on the search). Only reorders nodes; chains keep theirs.
    ("schedule", schedule_for_memory),
]


def run_pipeline(g: Graph, verify_each: bool = False) -> Graph:
    for _name, run in PIPELINE:
        g = run(g)
        if verify_each:
            verify_graph(g)
    return g
