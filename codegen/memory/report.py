"""The memory report of a build: the arena over time as an SVG picture, and a Markdown summary.

x is the step (kernel call), y the address; each buffer is one labelled rectangle spanning
its lifetime and its bytes. With the build's steps (`StepInfo`: call, kernel, the constants it
reads first) the time axis names each step's kernel (slanted, full text in a tooltip) and a
second panel shows flash on the same axis: the weights each step reads, and the code (the
estimate the budget check uses). Python computes every coordinate (as fixed-decimal strings,
so the text is deterministic); the template only loops and substitutes. No timing goes in: the
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
# With named steps: room for the slanted kernel names, then the flash panel.
NAMES_PX, FLASH_PX, FLASH_GAP, CODE_PX = 130, 120, 45, 90
LABEL_CHARS, LABEL_MIN_PX = 24, 12  # a kernel name's characters; the least room between two names


@dataclass(frozen=True)
class StepInfo:
    """One step of the schedule (a kernel call) as the report names it."""

    call: str
    kernel: str
    variant: str
    weights_bytes: int  # constants this call reads first (a shared constant counts once)
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class Tick:
    pos: str
    label: str
    tooltip: str = ""


@dataclass(frozen=True)
class Bar:
    x: str
    y: str
    w: str
    h: str
    tooltip: str


@dataclass(frozen=True)
class FlashPanel:
    title: str
    y: str
    h: str
    bottom: str
    y_label_y: str
    title_y: str
    top_label: str
    bars: tuple[Bar, ...]
    code_bar: Bar
    code_label_x: str
    code_label_y: str
    code_label: str


@dataclass(frozen=True)
class TextLine:
    text: str
    y: str


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
    lines: tuple[TextLine, ...]  # the label, in one or two lines


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
    named_steps: bool  # the x ticks are kernel names (slanted), not numbers
    x_axis_label: str
    flash: FlashPanel | None


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
    tensors with ';'), its last two '/'-parts (the layer and the op: the model's scope prefix
    is the same for every tensor), cut from the left to `width` characters. The full name is in
    the rectangle's tooltip and in the Markdown table."""
    head = name.split(";", 1)[0] or name
    parts = head.split("/")
    head = "/".join(parts[-2:]) if len(parts) > 2 else head
    return head if len(head) <= width else "\u2026" + head[-(width - 1):]


CHAR_W = 0.62  # a monospace character's width per unit of font size
MIN_FONT, MAX_FONT = 3.0, 11.0


def label_lines(label: str, w: float, h: float) -> tuple[tuple[str, ...], float]:
    """The label in one line, or two split after a '/' when that lets the font grow (a narrow,
    tall rectangle), and the font size that fits the rectangle."""
    def fit(lines: tuple[str, ...]) -> float:
        longest = max(len(x) for x in lines) or 1
        return max(MIN_FONT, min(MAX_FONT, h * 0.8 / len(lines), w / (CHAR_W * longest)))

    one = (label,)
    cut = label.rfind("/", 0, len(label) - 1)
    if cut <= 0:
        return one, fit(one)
    two = (label[:cut + 1], label[cut + 1:])
    return (two, fit(two)) if fit(two) > fit(one) else (one, fit(one))


def figures(plan: Plan, buffers: list[Buffer]) -> dict[str, int | str]:
    """The numbers the report (and the benchmark) state: arena, bounds, sum of sizes, planner."""
    return {"arena": plan.arena_size, "lower_bound": plan.lower_bound,
            "proven_bound": plan.proven_bound if plan.proven_bound is not None else plan.lower_bound,
            "sum_of_sizes": sum(b.size for b in buffers), "buffers": len(buffers),
            "planner": plan.planner, "status": plan.status}


def steps_of(ctx) -> tuple[StepInfo, ...]:
    """The steps of a lowered program (codegen.lower.context.LowerContext), in call order."""
    from codegen.lower.kernel import ConstArray

    seen: set[str] = set()
    steps = []
    for call in ctx.calls:
        consts = [a for a in call.args if isinstance(a, ConstArray)]
        consts += [v for v in call.params.values() if isinstance(v, ConstArray)]
        first = {c.name: c for c in consts if c.name not in seen}
        seen.update(first)
        steps.append(StepInfo(call.cname, call.kernel, call.variant, sum(c.nbytes for c in first.values()),
                              tuple(call.origin)))
    return tuple(steps)


def _x_ticks(steps: int, sx: float, named: tuple[StepInfo, ...], start: int) -> tuple[Tick, ...]:
    """`start`: the first step drawn (-1 when inputs are written into the arena before the first call)."""
    if not named:
        stride = max(1, math.ceil(steps / 24))
        return tuple(Tick(_f(LEFT + (s + 0.5) * sx), str(s + start)) for s in range(0, steps, stride))
    stride = max(1, math.ceil(LABEL_MIN_PX / sx))  # every step keeps its tooltip on its bar below
    ticks = []
    for k in range(0, len(named), stride):
        st = named[k]
        label = short_label(f"{k} {st.kernel}", LABEL_CHARS)
        tip = (f"step {k}: {st.call}, kernel {st.kernel} ({st.variant}), weights {st.weights_bytes:,} B; "
               f"nodes: {', '.join(st.nodes)}")
        ticks.append(Tick(_f(LEFT + (k - start + 0.5) * sx), label, tip))
    return tuple(ticks)


def _flash_panel(named: tuple[StepInfo, ...], code_bytes: int, top: float, sx: float,
                 plot_right: float, start: int) -> FlashPanel:
    """Weights per step on the arena's time axis, and the code as one bar right of the plot."""
    bottom = top + FLASH_PX
    weights = sum(s.weights_bytes for s in named)
    # Scaled to the largest weights: the code, often larger than any one layer's weights,
    # would flatten them; its bar stops at the top then, its figure written under it.
    top_bytes = max(max((s.weights_bytes for s in named), default=0), 1) if weights else max(code_bytes, 1)
    sy = FLASH_PX / top_bytes
    bars = []
    for k, st in enumerate(named):
        h = st.weights_bytes * sy
        bars.append(Bar(_f(LEFT + (k - start) * sx + 0.1 * sx), _f(bottom - h), _f(0.8 * sx), _f(h),
                        f"step {k}: {st.call} ({st.kernel}) reads {st.weights_bytes:,} B of weights first"))
    code_h = min(code_bytes, top_bytes) * sy
    code = Bar(_f(plot_right + 10), _f(bottom - code_h), _f(CODE_PX - 20), _f(code_h),
               f"code: about {code_bytes:,} B (kernels and calls, the estimate of the flash budget check)")
    return FlashPanel(
        title=f"Flash: weights {weights:,} B by the step that reads them, code about {code_bytes:,} B "
              f"(right), {weights + code_bytes:,} B in all",
        y=_f(top), h=_f(FLASH_PX), bottom=_f(bottom), y_label_y=_f(top), title_y=_f(top - 8),
        top_label=f"{top_bytes:,}", bars=tuple(bars), code_bar=code, code_label_x=_f(plot_right + CODE_PX / 2),
        code_label_y=_f(bottom + 12), code_label=f"code {code_bytes:,} B")


def svg_context(plan: Plan, buffers: list[Buffer], name: str, steps_info: tuple[StepInfo, ...] = (),
                code_bytes: int = 0) -> SvgContext:
    # step -1: inputs the caller writes before the first call (--io-in-arena)
    start = min((b.first for b in buffers), default=0) if any(b.first < 0 for b in buffers) else 0
    steps = max(max((b.last for b in buffers), default=0) + 1, len(steps_info)) - start
    right = RIGHT if not steps_info else CODE_PX  # room for the code bar
    width = min(max(WIDTH, LEFT + right + steps * STEP_PX), MAX_WIDTH)
    plot_w = width - LEFT - right
    plot_h = HEIGHT - TOP - BOTTOM
    bottom = TOP + plot_h
    height = HEIGHT if not steps_info else bottom + NAMES_PX + FLASH_GAP + FLASH_PX + 30
    top_bytes = max(plan.arena_size, plan.lower_bound, 1)
    sx, sy = plot_w / steps, plot_h / top_bytes
    rects = []
    for k, b in enumerate(sorted(buffers, key=lambda b: (b.first, plan.offsets[b.name], b.name))):
        off = plan.offsets[b.name]
        x, w = LEFT + (b.first - start) * sx, (b.last - b.first + 1) * sx
        h = max(b.size * sy, 0.5)
        y = bottom - off * sy - h
        label = short_label(b.name)
        # In the buffer's first step: a buffer written in place over its input is drawn over
        # the input's last step, so a label in the middle of the span would be hidden.
        col = min(w, sx) if steps_info else w
        lines, font = label_lines(label, col, h)
        cy = y + h / 2
        rects.append(Rect(_f(x), _f(y), _f(w), _f(h), _PALETTE[k % len(_PALETTE)], label,
                          f"{b.name}: {b.size} B at offset {off}, steps {b.first}-{b.last}",
                          _f(x + col / 2), _f(cy), _f(font),
                          tuple(TextLine(t, _f(cy + (j - (len(lines) - 1) / 2) * font * 1.1))
                                for j, t in enumerate(lines))))
    x_ticks = _x_ticks(steps, sx, steps_info, start)
    ystep = _nice_step(top_bytes)
    y_ticks = tuple(Tick(_f(bottom - v * sy), f"{v:,}") for v in range(0, top_bytes + 1, ystep))
    bound_y = bottom - plan.lower_bound * sy
    f = figures(plan, buffers)
    flash = None
    if steps_info:
        flash = _flash_panel(steps_info, code_bytes, bottom + NAMES_PX + FLASH_GAP, sx, LEFT + plot_w, start)
    return SvgContext(
        width=width, height=height, title=f"Arena of {name}: {f['arena']:,} B over {steps} steps",
        subtitle=(f"lower bound {f['lower_bound']:,} B, sum of sizes {f['sum_of_sizes']:,} B, "
                  f"planner {f['planner']}, {f['status']}"),
        plot_x=_f(LEFT), plot_y=_f(TOP), plot_w=_f(plot_w), plot_h=_f(plot_h),
        plot_right=_f(LEFT + plot_w), plot_bottom=_f(bottom), tick_end_x=_f(LEFT - 5),
        tick_end_y=_f(bottom + 5), x_label_y=_f(bottom + (12 if steps_info else 17)), y_label_x=_f(LEFT - 8),
        x_axis_x=_f(LEFT + plot_w / 2), x_axis_y=_f(bottom + (NAMES_PX + 8 if steps_info else 38)),
        y_axis_y=_f(TOP + plot_h / 2),
        x_ticks=x_ticks, y_ticks=y_ticks, rects=tuple(rects), bound_line=plan.lower_bound > 0,
        bound_y=_f(bound_y), bound_label_y=_f(bound_y - 3), bound_label=f"{plan.lower_bound:,} B",
        named_steps=bool(steps_info),
        x_axis_label="step: kernel called (hover for the call and its nodes)" if steps_info else "step (kernel call)",
        flash=flash)


def memory_svg(plan: Plan, buffers: list[Buffer], name: str, steps: tuple[StepInfo, ...] = (),
               code_bytes: int = 0) -> str:
    """The arena over time as SVG text (deterministic); with `steps`, kernel names on the time
    axis and the flash panel (`code_bytes`: the code's estimate)."""
    return _ENV.get_template("memory_report.svg.j2").render(c=svg_context(plan, buffers, name, steps, code_bytes))


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
