"""`kiln build --explain-fusion`: every fusion candidate, its decision, its cost both ways, why."""

from __future__ import annotations

from codegen.fusion.planner import Decision, FusionPlan


def _pct(before: int, after: int) -> str:
    return f"{100.0 * (after - before) / before:+.0f}%" if before else "n/a"


def _names(nodes: tuple[str, ...], width: int = 40) -> str:
    """The group's nodes, each name cut to `width` (TFLite tensor names run long), at most four."""
    short = [n if len(n) <= width else n[:width - 3] + "..." for n in nodes]
    if len(short) > 4:
        short = short[:2] + [f"... ({len(short) - 3} more)"] + short[-1:]
    return " + ".join(short)


def format_decision(d: Decision) -> str:
    verdict = "fuse" if d.fused else "decline"
    head = f"  [{verdict:<7}] {d.kind:<10} {_names(d.nodes)}"
    u, f = d.unfused_cost, d.fused_cost
    cost = (f"      cycles {u.cycles:,} -> {f.cycles:,} ({_pct(u.cycles, f.cycles)}), calls {u.calls} -> {f.calls}, "
            f"arena intermediates {u.arena_bytes:,} -> {f.arena_bytes:,} B, "
            f"flash {u.flash_bytes + d.unfused_code:,} -> {f.flash_bytes + d.fused_code:,} B")
    if d.arena_before is not None:
        cost += f", planned arena {d.arena_before:,} -> {d.arena_after:,} B"
    by = "" if d.by == "planner" else f" [by {d.by}]"
    return f"{head}\n{cost}\n      {d.reason}{by}"


def format_plan(plan: FusionPlan) -> str:
    fused = sum(d.fused for d in plan.decisions)
    lines = [f"fusion plan for {plan.target}, objective {plan.objective}: {len(plan.decisions)} candidate(s), "
             f"{fused} fused"]
    lines += [f"  search: {s}" for s in plan.searches]
    lines += [format_decision(d) for d in plan.decisions]
    return "\n".join(lines) + "\n"
