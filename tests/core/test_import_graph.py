"""The import graph of codegen/ runs one way: no cycles (imports inside functions included),
and nothing in ops/ or ir/ imports the later stages (lowering, kernels, memory, emit, fusion,
passes). Read from the sources, so that a deferred import cannot hide a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import codegen

PACKAGE = Path(codegen.__file__).resolve().parent
LATER_STAGES = ("lower", "kernels", "memory", "emit", "fusion", "passes")


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("codegen",) + path.relative_to(PACKAGE).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def _imports(name: str, path: Path, mods: dict[str, Path], type_only: bool = False) -> set[str]:
    """Modules of codegen that `name` imports anywhere but in a TYPE_CHECKING block (with
    `type_only`, there too); a package's imports of its own submodules are left out (they are
    its contents)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test) and not type_only:
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                found.add(base)
                found.update(f"{base}.{a.name}" for a in child.names)
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m in mods and m != name and not m.startswith(name + ".")}


def _graph(type_only: bool = False) -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(name, path, mods, type_only) for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_no_import_cycles_with_type_only_imports():
    """Not even an annotation may close a loop: a module's types come from modules before it."""
    assert _cycles(_graph(type_only=True)) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_ops_and_ir_import_no_later_stage():
    later = tuple(f"codegen.{stage}" for stage in LATER_STAGES)
    back = sorted((m, d) for m, deps in _graph().items() if m.startswith(("codegen.ops", "codegen.ir"))
                  for d in deps if d.startswith(later))
    assert back == []


def test_passes_import_no_later_stage():
    """Passes rewrite the graph before fusion, lowering and planning: a pass that needs a
    figure of a later stage (the memory scheduler's live bytes) computes it from the graph."""
    later = tuple(f"codegen.{stage}" for stage in LATER_STAGES if stage != "passes")
    back = sorted((m, d) for m, deps in _graph().items() if m.startswith("codegen.passes")
                  for d in deps if d.startswith(later))
    assert back == []


# The compiler's stages in the order they run, each a package of codegen/ (one tuple: a layer
# whose packages may import each other). An arrow may only point to the same or an earlier
# layer, type-only imports included: the kernel registry writes into no lowering context it
# imports, lowering asks the registry (codegen/lower/context.py -> codegen/kernels/select.py).
STAGES = (("ir", "ops", "quant"), ("passes",), ("fusion",), ("kernels",), ("lower",), ("memory",), ("emit",))


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return next((k for k, layer in enumerate(STAGES) if len(parts) > 1 and parts[1] in layer), None)


def test_stages_import_only_earlier_stages():
    back = sorted((m, d) for m, deps in _graph(type_only=True).items() if _layer(m) is not None
                  for d in deps if _layer(d) is not None and _layer(d) > _layer(m))
    assert back == []


def test_no_import_cycles_among_type_only_imports_of_the_stages():
    staged = {m: {d for d in deps if _layer(d) is not None}
              for m, deps in _graph(type_only=True).items() if _layer(m) is not None}
    assert _cycles(staged) == []
