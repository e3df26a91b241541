"""Nodes and graphs: the IR every stage of Kiln reads and writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codegen.ir.types import Value


@dataclass
class Node:
    """One operator application. `inputs`/`outputs` are value names; '' is an absent optional input."""

    op: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    # Names of the source-model nodes this node stands for (kept through passes, printed in C).
    origin: tuple[str, ...] = ()

    def attr(self, key: str) -> Any:
        return self.attrs[key]


@dataclass
class Graph:
    """A static dataflow graph: values by name, nodes in a valid execution order."""

    name: str
    values: dict[str, Value] = field(default_factory=dict)
    nodes: list[Node] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    def value(self, name: str) -> Value:
        return self.values[name]

    def add_value(self, value: Value) -> Value:
        if value.name in self.values:
            raise ValueError(f"value '{value.name}' defined twice")
        self.values[value.name] = value
        return value

    def producers(self) -> dict[str, Node]:
        return {out: n for n in self.nodes for out in n.outputs}

    def consumers(self) -> dict[str, list[Node]]:
        users: dict[str, list[Node]] = {name: [] for name in self.values}
        for n in self.nodes:
            for i in n.inputs:
                if i:
                    users.setdefault(i, []).append(n)
        return users

    def constants(self) -> list[Value]:
        return [v for v in self.values.values() if v.is_const]

    def fresh_name(self, base: str) -> str:
        """A value or node name not used yet, derived from `base` (stable across runs)."""
        taken = set(self.values) | {n.name for n in self.nodes}
        if base not in taken:
            return base
        i = 1
        while f"{base}_{i}" in taken:
            i += 1
        return f"{base}_{i}"
