"""One `CompileOptions` object feeds every stage; the CLI is its only parser."""

from __future__ import annotations

from dataclasses import dataclass, field

from codegen.targets import Target


@dataclass(frozen=True)
class CompileOptions:
    target: Target
    name: str | None = None  # C prefix of the generated code; default: from the model file name
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    planner: str = "greedy"
