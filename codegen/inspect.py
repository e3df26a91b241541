"""`kiln inspect`: what a model contains and whether Kiln can compile it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from codegen.memory.lifetimes import arena_buffers
from codegen.errors import KilnError
from codegen.frontends import load_model, scan_model
from codegen.lower import lower_graph
from codegen.memory import lower_bound
from codegen.ops.registry import get_op
from codegen.passes.pipeline import run_pipeline
from codegen.targets import load_target


def inspect_model(path: Path, input_shapes: dict[str, tuple[int, ...]],
                  specialized: dict[str, tuple[float, ...]] | None = None) -> tuple[str, bool]:
    """A text report, and whether every operator is supported (with `specialized` inputs read
    as the constants `kiln build --specialize` makes them)."""
    ops = scan_model(path, tuple(specialized or ()))
    lines = [f"model: {path.name}", f"operators: {len(ops)}"]
    counts = Counter(op.op_type for op in ops)
    for op_type, n in sorted(counts.items()):
        ok = all(o.supported for o in ops if o.op_type == op_type)
        lines.append(f"  {op_type:28s} x{n:<4d} {'supported' if ok else 'UNSUPPORTED'}")
    unsupported = [o for o in ops if not o.supported]
    if unsupported:
        lines.append(f"unsupported: {len(unsupported)} node(s)")
        for o in unsupported:
            lines.append(f"  {o.op_type} (node '{o.node}'){': ' + o.reason if o.reason else ''}")
        return "\n".join(lines) + "\n", False
    g = run_pipeline(load_model(path, input_shapes, specialized))
    macs = sum(get_op(n.op).macs(n, g) for n in g.nodes)
    params = sum(v.nbytes for v in g.constants())
    try:
        bound = f"{lower_bound(arena_buffers(lower_graph(g, load_target('host'))))} B"
    except KilnError as err:
        bound = f"unknown ({err.message})"
    lines += [f"MACs per inference: {macs:,}", f"parameter bytes: {params:,}",
              f"activation lower bound (host kernels, file order): {bound}",
              "all operators supported"]
    return "\n".join(lines) + "\n", True
