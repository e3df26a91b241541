"""`kiln analyze`: the compiled model layer by layer, as `stm32ai analyze` shows it.

One row per kernel call of the generated code (a layer, or a group of layers fused into one
kernel): the ops it computes, the kernel and its variant, MACs, the constants it reads from flash
(weights, bias, requantization tables; a constant shared by several calls counts at its first
user), its activation bytes in and out and its scratch, the fusion cost model's estimate
(instructions and cycles, codegen/fusion/costmodel.py) and, with `--profile`, the instructions
counted in QEMU (`kiln profile`'s per-call counts). Totals at the end. As a table, CSV or JSON.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from codegen.compiler import BuildResult, compile_model
from codegen.fusion.costmodel import Work, estimate
from codegen.fusion.target_cost import cost_params
from codegen.fusion.work import chain_work, node_work
from codegen.ir.graph import Graph, Node
from codegen.lower.kernel import KernelCall, ScratchArg
from codegen.memory.report import steps_of
from codegen.ops.fused_elementwise import ChainBody
from codegen.ops.registry import get_op
from codegen.options import CompileOptions

FORMATS = ("table", "csv", "json")


@dataclass(frozen=True)
class Layer:
    index: int
    call: str  # C name of the call
    ops: str  # the graph ops it computes, "+"-joined when fused
    kernel: str
    variant: str
    macs: int
    weights_bytes: int  # flash: constants first read by this call
    act_in_bytes: int
    act_out_bytes: int
    scratch_bytes: int
    est_instructions: int  # the cost model's estimate
    est_cycles: int
    measured_instructions: int | None  # `--profile`: counted in QEMU (None without)
    nodes: tuple[str, ...]  # source-model node names


@dataclass(frozen=True)
class Analysis:
    model: str
    target: str
    layers: tuple[Layer, ...]
    arena_bytes: int
    weights_bytes: int  # every constant of the model (the sum of the layers' weights_bytes)
    measured_total: int | None  # `--profile`: call to return of the model, harness excluded

    def totals(self) -> dict[str, int | None]:
        measured = [x.measured_instructions for x in self.layers]
        return {"macs": sum(x.macs for x in self.layers),
                "weights_bytes": sum(x.weights_bytes for x in self.layers),
                "act_in_bytes": sum(x.act_in_bytes for x in self.layers),
                "act_out_bytes": sum(x.act_out_bytes for x in self.layers),
                # scratch lives during its call only: the largest one, not a sum
                "scratch_bytes": max((x.scratch_bytes for x in self.layers), default=0),
                "est_instructions": sum(x.est_instructions for x in self.layers),
                "est_cycles": sum(x.est_cycles for x in self.layers),
                "measured_instructions": None if None in measured else sum(measured)}  # type: ignore[arg-type]


def _call_nodes(call: KernelCall, g: Graph) -> list[Node]:
    """The nodes of the (fused) graph a call computes: those writing what it writes."""
    writes = set(call.writes)
    return [n for n in g.nodes if writes & set(n.outputs)]


def _work(node: Node, g: Graph) -> Work:
    body = node.attrs.get("body")
    if isinstance(body, ChainBody):  # a fused elementwise chain: its steps, not one opaque kernel
        return chain_work(body.graph.nodes, body.graph, [i for i in node.inputs[1:] if i])
    return node_work(node, g)


def _ops(nodes: list[Node]) -> str:
    names = []
    for n in nodes:
        body = n.attrs.get("body")
        names += [m.op for m in body.graph.nodes] if isinstance(body, ChainBody) else [n.op]
    return "+".join(names) or "-"


def layers_of(build: BuildResult) -> list[Layer]:
    ctx = build.lowered
    g, params = ctx.g, cost_params(ctx.target)
    layers = []
    for k, (call, step) in enumerate(zip(ctx.calls, steps_of(ctx))):
        nodes = _call_nodes(call, g)
        est = estimate([_work(n, g) for n in nodes], params)
        acts_in = {v for v in call.reads if v in g.values and not g.values[v].is_const}
        layers.append(Layer(
            index=k, call=call.cname, ops=_ops(nodes), kernel=call.kernel, variant=call.variant,
            macs=sum(get_op(n.op).macs(n, g) for n in nodes),
            weights_bytes=step.weights_bytes,
            act_in_bytes=sum(g.values[v].nbytes for v in sorted(acts_in)),
            act_out_bytes=sum(g.values[v].nbytes for v in call.writes if v in g.values),
            scratch_bytes=sum(a.nbytes for a in call.args if isinstance(a, ScratchArg)),
            est_instructions=est.instructions, est_cycles=est.cycles, measured_instructions=None,
            nodes=tuple(call.origin)))
    return layers


def analyze_model(model: Path, options: CompileOptions, *, profile: bool = False, seed: int = 0) -> Analysis:
    build = compile_model(model, options)
    layers = layers_of(build)
    measured_total = None
    if profile:
        from dataclasses import replace

        from codegen.verify.profile import profile_build

        prof = profile_build(build, options.target, seed=seed)
        layers = [replace(x, measured_instructions=min(c.instructions)) for x, c in zip(layers, prof.calls)]
        measured_total = min(prof.totals)
    return Analysis(model=model.name, target=options.target.name, layers=tuple(layers),
                    arena_bytes=int(build.manifest["arena_bytes"]),
                    weights_bytes=int(build.manifest["weights_bytes"]), measured_total=measured_total)


COLUMNS = (("#", "index", 3), ("call", "call", 20), ("ops", "ops", 22), ("kernel", "kernel", 22),
           ("variant", "variant", 12), ("MACs", "macs", 11), ("weights B", "weights_bytes", 10),
           ("in B", "act_in_bytes", 8), ("out B", "act_out_bytes", 8), ("scratch B", "scratch_bytes", 9),
           ("est insns", "est_instructions", 11), ("est cycles", "est_cycles", 11),
           ("measured insns", "measured_instructions", 14))


def _cell(value, width: int, text: bool) -> str:
    if value is None:
        return f"{'-':>{width}}"
    if text:
        s = str(value)
        return f"{s if len(s) <= width else s[:width - 1] + '~':<{width}}"
    return f"{value:>{width},}"


def format_table(a: Analysis) -> str:
    texts = {"call", "ops", "kernel", "variant"}
    cols = [c for c in COLUMNS if c[1] != "measured_instructions" or a.measured_total is not None]
    lines = [f"kiln analyze: {a.model} on {a.target}: {len(a.layers)} kernel calls, arena {a.arena_bytes:,} B, "
             f"weights {a.weights_bytes:,} B (flash)",
             "  ".join(f"{h:<{w}}" if key in texts else f"{h:>{w}}" for h, key, w in cols)]
    for layer in a.layers:
        row = asdict(layer)
        lines.append("  ".join(_cell(row[key], w, key in texts) for _, key, w in cols))
    totals = a.totals()
    cells = []
    for _, key, w in cols:
        if key == "call":
            cells.append(f"{'total':<{w}}")
        elif key in totals:
            cells.append(_cell(totals[key], w, False))
        else:
            cells.append(" " * w)
    lines.append("  ".join(cells))
    lines.append("  in/out B: activation bytes each call reads and writes; weights B: constants (weights, bias, "
                 "requantization) it reads first; scratch total: the largest; est: the fusion cost model")
    if a.measured_total is not None:
        lines.append(f"  measured in QEMU (exact instructions): kernels {totals['measured_instructions']:,}, "
                     f"call to return of the model {a.measured_total:,}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def format_csv(a: Analysis) -> str:
    out = io.StringIO()
    keys = [key for _, key, _ in COLUMNS]
    w = csv.writer(out, lineterminator="\n")
    w.writerow(keys + ["nodes"])
    for layer in a.layers:
        row = asdict(layer)
        w.writerow(["" if row[k] is None else row[k] for k in keys] + [";".join(layer.nodes)])
    totals = a.totals()
    w.writerow(["total" if k == "index" else ("" if totals.get(k) is None else totals.get(k, "")) for k in keys]
               + [""])
    return out.getvalue()


def format_json(a: Analysis) -> str:
    doc = {"model": a.model, "target": a.target, "arena_bytes": a.arena_bytes, "weights_bytes": a.weights_bytes,
           "layers": [{**asdict(x), "nodes": list(x.nodes)} for x in a.layers], "totals": a.totals(),
           "measured_total_instructions": a.measured_total}
    return json.dumps(doc, indent=2) + "\n"


def format_analysis(a: Analysis, fmt: str) -> str:
    return {"table": format_table, "csv": format_csv, "json": format_json}[fmt](a)
