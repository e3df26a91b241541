"""The memory report of a build: the arena over time as an SVG picture, and a Markdown summary.

x is the step (kernel call), y the address; each buffer is one labelled rectangle spanning
its lifetime and its bytes. Python computes every coordinate (as fixed-decimal strings, so the
text is deterministic); the template only loops and substitutes. No timing goes in: the
report is a build file and must be byte-identical across runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jinja2

from codegen.memory.buffers import Buffer, Plan
from codegen.resources import TEMPLATES

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES)),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=True,  # buffer names come from the model: escape them for XML
)

# A colour-blind-safe palette (Okabe-Ito, lightened), cycled over buffers in start order.
_PALETTE = ("#9fd4f5", "#f7c873", "#8fd1b8", "#f5a89a", "#c9b3e0", "#f2e68c", "#a9c5e8", "#e0b08a")

WIDTH, HEIGHT = 960, 560  # the least size; wider for long schedules, up to MAX_WIDTH
STEP_PX, MAX_WIDTH = 40, 2400
LEFT, RIGHT, TOP, BOTTOM = 90, 20, 48, 52


@dataclass(frozen=True)
class Tick:
    pos: str
    label: str


@dataclass(frozen=True)
class Rect:
    x: str
    y: str
    w: str
    h: str
    fill: str
    label: str
    tooltip: str
    text_x: str
    text_y: str
    font: str


@dataclass(frozen=True)
class SvgContext:
    width: int
    height: int
    title: str
    subtitle: str
    plot_x: str
    plot_y: str
    plot_w: str
    plot_h: str
    plot_right: str
    plot_bottom: str
    tick_end_x: str
    tick_end_y: str
    x_label_y: str
    y_label_x: str
    x_axis_x: str
    x_axis_y: str
    y_axis_y: str
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    rects: tuple[Rect, ...]
    bound_line: bool
    bound_y: str
    bound_label_y: str
    bound_label: str


def _f(v: float) -> str:
    return f"{v:.2f}"


def _nice_step(span: int, ticks: int = 5) -> int:
    """A 1-2-5 step that cuts `span` into at most about `ticks` parts."""
    raw = max(span / ticks, 1)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return int(m * mag)
    return int(10 * mag)


def short_label(name: str, width: int = 20) -> str:
    """A label that fits a rectangle: the first ';'-part (TFLite joins the names of fused
    tensors with ';'), cut from the left to `width` characters. The full name is in the
    rectangle's tooltip and in the Markdown table."""
    head = name.split(";", 1)[0] or name
    return head if len(head) <= width else "\u2026" + head[-(width - 1):]


def figures(plan: Plan, buffers: list[Buffer]) -> dict[str, int | str]:
    """The numbers the report (and the benchmark) state: arena, bounds, sum of sizes, planner."""
    return {"arena": plan.arena_size, "lower_bound": plan.lower_bound,
            "proven_bound": plan.proven_bound if plan.proven_bound is not None else plan.lower_bound,
            "sum_of_sizes": sum(b.size for b in buffers), "buffers": len(buffers),
            "planner": plan.planner, "status": plan.status}


def svg_context(plan: Plan, buffers: list[Buffer], name: str) -> SvgContext:
    steps = max((b.last for b in buffers), default=0) + 1
    width = min(max(WIDTH, LEFT + RIGHT + steps * STEP_PX), MAX_WIDTH)
    plot_w, plot_h = width - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    bottom = TOP + plot_h
    top_bytes = max(plan.arena_size, plan.lower_bound, 1)
    sx, sy = plot_w / steps, plot_h / top_bytes
    rects = []
    for k, b in enumerate(sorted(buffers, key=lambda b: (b.first, plan.offsets[b.name], b.name))):
        off = plan.offsets[b.name]
        x, w = LEFT + b.first * sx, (b.last - b.first + 1) * sx
        h = max(b.size * sy, 0.5)
        y = bottom - off * sy - h
        label = short_label(b.name)
        font = max(3.0, min(11.0, h * 0.8, w / (0.62 * max(len(label), 1))))
        rects.append(Rect(_f(x), _f(y), _f(w), _f(h), _PALETTE[k % len(_PALETTE)], label,
                          f"{b.name}: {b.size} B at offset {off}, steps {b.first}-{b.last}",
                          _f(x + w / 2), _f(y + h / 2), _f(font)))
    stride = max(1, math.ceil(steps / 24))
    x_ticks = tuple(Tick(_f(LEFT + (s + 0.5) * sx), str(s)) for s in range(0, steps, stride))
    ystep = _nice_step(top_bytes)
    y_ticks = tuple(Tick(_f(bottom - v * sy), f"{v:,}") for v in range(0, top_bytes + 1, ystep))
    bound_y = bottom - plan.lower_bound * sy
    f = figures(plan, buffers)
    return SvgContext(
        width=width, height=HEIGHT, title=f"Arena of {name}: {f['arena']:,} B over {steps} steps",
        subtitle=(f"lower bound {f['lower_bound']:,} B, sum of sizes {f['sum_of_sizes']:,} B, "
                  f"planner {f['planner']}, {f['status']}"),
        plot_x=_f(LEFT), plot_y=_f(TOP), plot_w=_f(plot_w), plot_h=_f(plot_h),
        plot_right=_f(LEFT + plot_w), plot_bottom=_f(bottom), tick_end_x=_f(LEFT - 5),
        tick_end_y=_f(bottom + 5), x_label_y=_f(bottom + 17), y_label_x=_f(LEFT - 8),
        x_axis_x=_f(LEFT + plot_w / 2), x_axis_y=_f(bottom + 38), y_axis_y=_f(TOP + plot_h / 2),
        x_ticks=x_ticks, y_ticks=y_ticks, rects=tuple(rects), bound_line=plan.lower_bound > 0,
        bound_y=_f(bound_y), bound_label_y=_f(bound_y - 3), bound_label=f"{plan.lower_bound:,} B")


def memory_svg(plan: Plan, buffers: list[Buffer], name: str) -> str:
    """The arena over time as SVG text (deterministic)."""
    return _ENV.get_template("memory_report.svg.j2").render(c=svg_context(plan, buffers, name))


def memory_markdown(plan: Plan, buffers: list[Buffer], name: str, svg_file: str | None = None,
                    state_bytes: int = 0) -> str:
    """The figures and the table of buffers, with the picture linked when there is one
    (`state_bytes`: a streaming model's variables, kept beside the arena)."""
    f = figures(plan, buffers)
    lines = [f"# Memory plan of {name}", "",
             f"- arena: {f['arena']} B"]
    if state_bytes:
        lines.append(f"- persistent state (the model's variables, beside the arena): {state_bytes} B")
    lines += [
             f"- lower bound (largest live total): {f['lower_bound']} B"]
    if plan.alias_bound is not None:
        lines.append(f"- lower bound with the declared in-place reuse: {plan.alias_bound} B")
    if f["proven_bound"] != (f["lower_bound"] if plan.alias_bound is None else plan.alias_bound):
        lines.append(f"- proven bound (CP-SAT): {f['proven_bound']} B")
    if plan.aliases:
        lines.append("- in place (output written over its dying input): "
                     + ", ".join(f"{o} over {i}" for o, i in plan.aliases).replace("|", chr(92) + "|"))
    lines += [f"- sum of buffer sizes: {f['sum_of_sizes']} B ({f['buffers']} buffers)",
              f"- planner: {f['planner']}, status {f['status']}", ""]
    if svg_file:
        lines += [f"![arena over time]({svg_file})", ""]
    lines += ["| buffer | bytes | offset | first step | last step |", "|---|---:|---:|---:|---:|"]
    for b in sorted(buffers, key=lambda b: (plan.offsets[b.name], b.first, b.name)):
        lines.append(f"| {b.name.replace('|', chr(92) + '|')} | {b.size} | {plan.offsets[b.name]} | {b.first} | {b.last} |")
    return "\n".join(lines) + "\n"
