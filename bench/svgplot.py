"""Grouped horizontal bar charts as SVG, written without plotting libraries.

One group per model, one bar per tool, on a logarithmic axis (the figures span several
orders of magnitude); each bar is labelled with its value, and a missing value is shown as
"n/a" so that a gap is never mistaken for zero. Output is deterministic text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

BAR_H = 13
BAR_GAP = 2
GROUP_GAP = 12
LEFT = 120  # model labels
RIGHT = 90  # value labels
PLOT_W = 560
TOP = 56
FONT = "font-family=\"DejaVu Sans, Arial, sans-serif\""


@dataclass(frozen=True)
class Series:
    name: str
    color: str
    values: tuple[float | None, ...]  # one per group
    hatched: bool = False  # published figures, not measured in this run


def human(v: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.3g}{unit}"
    return f"{v:.3g}"


def grouped_bars(title: str, subtitle: str, groups: list[str], series: list[Series], unit: str) -> str:
    present = [v for s in series for v in s.values if v is not None and v > 0]
    lo = 10 ** math.floor(math.log10(min(present))) if present else 1.0
    hi = 10 ** math.ceil(math.log10(max(present))) if present else 10.0
    if hi <= lo:
        hi = lo * 10
    span = math.log10(hi) - math.log10(lo)

    def x(v: float) -> float:
        return LEFT + PLOT_W * (math.log10(v) - math.log10(lo)) / span

    group_h = len(series) * (BAR_H + BAR_GAP) + GROUP_GAP
    legend_h = 18 * ((len(series) + 2) // 3)
    height = TOP + len(groups) * group_h + 30 + legend_h
    width = LEFT + PLOT_W + RIGHT
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" {FONT} font-size="11">',
           '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" fill="white"/>'
           '<line x1="0" y1="0" x2="0" y2="6" stroke="#555" stroke-width="3"/></pattern></defs>',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
           f'<text x="{LEFT}" y="38" fill="#444">{escape(subtitle)}</text>']
    axis_bottom = TOP + len(groups) * group_h
    decade = lo
    while decade <= hi * 1.0001:
        xx = x(decade)
        out.append(f'<line x1="{xx:.1f}" y1="{TOP - 6}" x2="{xx:.1f}" y2="{axis_bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{xx:.1f}" y="{axis_bottom + 14}" text-anchor="middle" fill="#444">'
                   f'{escape(human(decade))}{escape(unit)}</text>')
        decade *= 10
    for g, label in enumerate(groups):
        y0 = TOP + g * group_h
        mid = y0 + (len(series) * (BAR_H + BAR_GAP)) / 2
        out.append(f'<text x="{LEFT - 8}" y="{mid + 4:.1f}" text-anchor="end" font-weight="bold">'
                   f'{escape(label)}</text>')
        for k, s in enumerate(series):
            y = y0 + k * (BAR_H + BAR_GAP)
            v = s.values[g]
            if v is None or v <= 0:
                out.append(f'<text x="{LEFT + 4}" y="{y + BAR_H - 3}" fill="#888">n/a ({escape(s.name)})</text>')
                continue
            w = max(1.0, x(v) - LEFT)
            fill = "url(#hatch)" if s.hatched else s.color
            out.append(f'<rect x="{LEFT}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{fill}" '
                       f'stroke="{s.color}"><title>{escape(s.name)}: {v:,.0f}</title></rect>')
            out.append(f'<text x="{LEFT + w + 4:.1f}" y="{y + BAR_H - 3}">{escape(human(v))}</text>')
    ly = axis_bottom + 34
    for k, s in enumerate(series):
        lx = LEFT + (k % 3) * (PLOT_W // 3)
        yy = ly + (k // 3) * 18
        fill = "url(#hatch)" if s.hatched else s.color
        out.append(f'<rect x="{lx}" y="{yy - 10}" width="14" height="11" fill="{fill}" stroke="{s.color}"/>')
        out.append(f'<text x="{lx + 19}" y="{yy}">{escape(s.name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
