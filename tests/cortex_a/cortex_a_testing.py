"""Building test graphs for a Cortex-A target (by name, or a Target such as one restricted
with codegen.targets.with_kernels)."""

from __future__ import annotations

from codegen.compiler import BuildResult, compile_graph
from codegen.ir import Graph
from codegen.options import CompileOptions
from codegen.targets import Target, load_target


def build(g: Graph, target: str | Target, name: str = "t") -> BuildResult:
    t = load_target(target) if isinstance(target, str) else target
    return compile_graph(g, CompileOptions(t), name=name, model_file=f"{name}.test", model_sha256="0" * 64)
