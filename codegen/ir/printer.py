"""A readable text form of a graph, for --dump-ir, error messages and test failures."""

from __future__ import annotations

from codegen.ir.graph import Graph


def _fmt_attr(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_fmt_attr(v) for v in value) + "]"
    return str(value)


def format_graph(g: Graph) -> str:
    lines = [f"graph {g.name}"]
    for name in g.inputs:
        lines.append(f"  input  %{name}: {g.values[name].type_str()}")
    for v in g.constants():
        lines.append(f"  const  %{v.name}: {v.type_str()}")
    for n in g.nodes:
        attrs = ", ".join(f"{k}={_fmt_attr(v)}" for k, v in sorted(n.attrs.items()))
        outs = ", ".join(f"%{o}: {g.values[o].type_str()}" for o in n.outputs)
        ins = ", ".join(f"%{i}" if i else "_" for i in n.inputs)
        lines.append(f"  {outs} = {n.op}({ins}){' {' + attrs + '}' if attrs else ''}  # {n.name}")
    lines.append("  return " + ", ".join(f"%{o}" for o in g.outputs))
    return "\n".join(lines) + "\n"
