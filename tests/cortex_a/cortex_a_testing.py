"""Building test graphs for a Cortex-A target (by name, or a Target such as one restricted
with codegen.targets.with_kernels)."""

from __future__ import annotations

from codegen.compiler import BuildResult
from codegen.ir import Graph
from codegen.targets import Target
from helpers import build_graph


def build(g: Graph, target: str | Target, name: str = "t", **opts) -> BuildResult:
    return build_graph(g, name, target=target, **opts)
