"""The per-type grouped bar chart of a comparison: inline SVG (hand-written) and PNG (matplotlib).

One bar group per question type, one bar per run, height = the run's accuracy on its own judged
questions of that type; a type a run did not judge shows "n/a" instead of a bar. The SVG uses no
external scripts, stylesheets or fonts (generic `sans-serif` only), so it can be inlined in HTML.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from lme_bench.compare.paired import Row

COLORS = ("#4c78a8", "#f58518")  # run A, run B
_GROUP_WIDTH = 120
_BAR_WIDTH = 36
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 64, 64
_LINE_CHARS = 16  # x labels wrap after a hyphen beyond this many characters
_PLOT_HEIGHT = 240


@dataclass(frozen=True, slots=True)
class BarGroup:
    label: str  # question type
    values: tuple[float | None, float | None]  # accuracy of A, of B (0-1); None: not judged


@dataclass(frozen=True, slots=True)
class BarChart:
    title: str
    series: tuple[str, str]  # legend labels of A and B
    groups: Sequence[BarGroup]
    y_label: str = "accuracy (own judged questions)"


def chart(run_a: str, run_b: str, per_type: Sequence[Row]) -> BarChart:
    """Each run's accuracy on its own judged questions, one group per question type."""
    return BarChart(
        title="QA accuracy per question type",
        series=(f"A: {run_a}", f"B: {run_b}"),
        groups=[BarGroup(r.name, (r.a.value, r.b.value)) for r in per_type],
    )


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def wrap_label(label: str) -> list[str]:
    """Split a question type after hyphens (or underscores) into lines of at most ~16
    characters."""
    pieces = re.findall(r"[^-_]+[-_]?|[-_]", label)
    lines = [""]
    for piece in pieces:
        if lines[-1] and len(lines[-1]) + len(piece) > _LINE_CHARS:
            lines.append("")
        lines[-1] += piece
    return lines


def x_label(x: float, y: float, label: str, css: str = "") -> str:
    """A centred axis label under a bar group, wrapped after hyphens."""
    lines = "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else 13}">{escape(line)}</tspan>'
        for i, line in enumerate(wrap_label(label))
    )
    css_class = f'class="{css}" ' if css else ""
    return (
        f'<text {css_class}x="{x:.1f}" y="{y:.1f}" text-anchor="middle" '
        f'font-size="11">{lines}</text>'
    )


def _y(value: float) -> float:
    return _TOP + _PLOT_HEIGHT * (1 - value)


def _axes(width: int) -> list[str]:
    parts = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        parts.append(
            f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{width - _RIGHT}" y2="{y:.1f}" '
            f'stroke="#dddddd" stroke-width="1"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
            f"{100 * tick:.0f}%</text>"
        )
    base = _y(0.0)
    parts.append(
        f'<line x1="{_LEFT}" y1="{base:.1f}" x2="{width - _RIGHT}" y2="{base:.1f}" '
        'stroke="#333333" stroke-width="1"/>'
    )
    return parts


def _legend(chart: BarChart) -> list[str]:
    parts = []
    x = _LEFT
    for name, color in zip(chart.series, COLORS, strict=True):
        parts.append(
            f'<rect x="{x}" y="30" width="12" height="12" fill="{color}"/>'
            f'<text x="{x + 16}" y="40" font-size="12">{escape(name)}</text>'
        )
        x += 24 + 8 * len(name)
    return parts


def _group(index: int, group: BarGroup, series: tuple[str, str]) -> str:
    left = _LEFT + index * _GROUP_WIDTH + (_GROUP_WIDTH - 2 * _BAR_WIDTH) / 2
    parts = [f'<g class="bar-group" data-type="{escape(group.label)}">']
    for i, (value, name, color) in enumerate(zip(group.values, series, COLORS, strict=True)):
        x = left + i * _BAR_WIDTH
        center = x + _BAR_WIDTH / 2
        if value is not None:
            y = _y(value)
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{_BAR_WIDTH - 4}" '
                f'height="{_y(0.0) - y:.1f}" fill="{color}">'
                f"<title>{escape(name)}: {_percent(value)}</title></rect>"
            )
        label_y = (_y(value) if value is not None else _y(0.0)) - 4
        parts.append(
            f'<text x="{center - 2:.1f}" y="{label_y:.1f}" text-anchor="middle" '
            f'font-size="10">{_percent(value)}</text>'
        )
    x = _LEFT + (index + 0.5) * _GROUP_WIDTH
    parts.append(x_label(x, _y(0.0) + 16, group.label, css="x-label"))
    parts.append("</g>")
    return "".join(parts)


def render_svg(chart: BarChart) -> str:
    """The chart as a standalone <svg> element (UTF-8 text, no external references)."""
    width = _LEFT + _GROUP_WIDTH * max(1, len(chart.groups)) + _RIGHT
    height = _TOP + _PLOT_HEIGHT + _BOTTOM
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img" '
        f'aria-label="{escape(chart.title)}">',
        f'<text x="{_LEFT}" y="18" font-size="14" font-weight="bold">{escape(chart.title)}</text>',
        *_legend(chart),
        *_axes(width),
        *(_group(i, g, chart.series) for i, g in enumerate(chart.groups)),
        "</svg>",
    ]
    return "\n".join(parts)


def render_png(chart: BarChart) -> bytes:
    """The same chart as PNG bytes, drawn with matplotlib's Agg backend (no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = max(1, len(chart.groups))
    figure = Figure(figsize=(max(6.0, 1.4 * n + 1.5), 5.0), dpi=100)
    FigureCanvasAgg(figure)  # attaches the Agg canvas to the figure
    axes = figure.add_subplot()
    width = 0.38
    for i, (name, color) in enumerate(zip(chart.series, COLORS, strict=True)):
        xs = [g + (i - 0.5) * width for g in range(len(chart.groups))]
        values = [group.values[i] for group in chart.groups]
        bars = axes.bar(xs, [v or 0.0 for v in values], width * 0.95, color=color, label=name)
        for bar, value in zip(bars, values, strict=True):
            axes.annotate(
                _percent(value),
                (bar.get_x() + bar.get_width() / 2, value or 0.0),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=8,
            )
    axes.set_xticks(range(len(chart.groups)))
    axes.set_xticklabels(["\n".join(wrap_label(g.label)) for g in chart.groups], fontsize=9)
    axes.set_ylim(0.0, 1.2)
    axes.set_yticks([0.0, 0.25, 0.5, 0.75, 1.0])
    axes.set_yticklabels(["0%", "25%", "50%", "75%", "100%"])
    axes.set_ylabel(chart.y_label)
    axes.set_title(chart.title, fontsize=11)
    axes.grid(axis="y", color="#dddddd")
    axes.set_axisbelow(True)
    axes.legend(loc="upper center", ncol=2, fontsize=9, frameon=False)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")  # through the Agg canvas attached above
    return buffer.getvalue()
