"""A series' trend chart of one headline figure: its runs oldest to newest, the figure's line
with its 95% interval as a band, a thinner line per question type, each point linking its
run's report; a break (another benchmark, dataset file or judge) is a dashed marker saying
why, and no line crosses it. Hand-written inline SVG, as the run report's chart
(lme_bench.report.html_chart): no scripts, stylesheets or fonts beyond `sans-serif`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from lme_bench.results.history_figures import Figure

COLOR = "#4c78a8"
TYPE_COLORS = (
    "#f58518",
    "#54a24b",
    "#e45756",
    "#72b7b2",
    "#b279a2",
    "#9d755d",
    "#eeca3b",
    "#ff9da6",
    "#bab0ac",
)
_SLOT = 110
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 24, 40, 56
_PLOT_HEIGHT = 220
_LEGEND_LINE = 16


@dataclass(frozen=True)
class TrendPoint:
    run_id: str
    label: str  # the run's date
    figure: Figure | None  # None: the run has no such figure (blank)
    link: str | None = None  # its report.html, relative to the page


@dataclass(frozen=True)
class TrendChart:
    title: str
    percent: bool
    points: Sequence[TrendPoint]  # oldest first
    breaks: dict[int, list[str]] = field(default_factory=dict)  # before point i: why

    @property
    def types(self) -> list[str]:
        found: dict[str, None] = {}
        for point in self.points:
            if point.figure is not None:
                found |= dict.fromkeys(point.figure.per_type)
        return sorted(found)


def shown(value: float | None, percent: bool) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.3f}"


def _x(index: int) -> float:
    return _LEFT + (index + 0.5) * _SLOT


def _y(value: float) -> float:
    return _TOP + _PLOT_HEIGHT * (1 - min(max(value, 0.0), 1.0))


def segments(chart: TrendChart) -> list[list[int]]:
    """Runs of consecutive point indexes with the figure and no break between them."""
    found: list[list[int]] = []
    for i, point in enumerate(chart.points):
        if point.figure is None or point.figure.value is None:
            continue
        joined = found and found[-1][-1] == i - 1 and i not in chart.breaks
        if joined:
            found[-1].append(i)
        else:
            found.append([i])
    return found


def _value(point: TrendPoint) -> float:
    return point.figure.value or 0.0 if point.figure is not None else 0.0


def _path(points: list[tuple[float, float]]) -> str:
    return "M" + "L".join(f"{x:.1f},{y:.1f}" for x, y in points)


def _band(chart: TrendChart, indexes: list[int]) -> str:
    figures = [chart.points[i].figure for i in indexes]
    if not any(f is not None and f.ci95 for f in figures):
        return ""
    upper, lower = [], []
    for i, f in zip(indexes, figures, strict=True):
        assert f is not None and f.value is not None
        low, high = f.ci95 or (f.value, f.value)
        upper.append((_x(i), _y(high)))
        lower.append((_x(i), _y(low)))
    if len(indexes) == 1:  # a lone point: its interval as a whisker
        (x, top), (_, bottom) = upper[0], lower[0]
        return (
            f'<path class="band" d="M{x:.1f},{bottom:.1f}V{top:.1f}M{x - 6:.1f},{top:.1f}h12'
            f'M{x - 6:.1f},{bottom:.1f}h12" stroke="{COLOR}" stroke-opacity="0.5" fill="none"/>'
        )
    return (
        f'<path class="band" d="{_path(upper + lower[::-1])}Z" fill="{COLOR}" '
        'fill-opacity="0.18" stroke="none"/>'
    )


def _type_lines(chart: TrendChart, indexes: list[int], types: list[str]) -> list[str]:
    parts = []
    for n, name in enumerate(types):
        color = TYPE_COLORS[n % len(TYPE_COLORS)]
        run: list[tuple[float, float]] = []
        pieces: list[list[tuple[float, float]]] = [run]
        for i in indexes:
            figure = chart.points[i].figure
            value = figure.per_type.get(name) if figure is not None else None
            if value is None:
                run = []
                pieces.append(run)
            else:
                run.append((_x(i), _y(value)))
        for piece in (p for p in pieces if p):
            shape = (
                f'<path d="{_path(piece)}" fill="none" stroke="{color}" stroke-width="1.2"/>'
                if len(piece) > 1
                else f'<circle cx="{piece[0][0]:.1f}" cy="{piece[0][1]:.1f}" r="2" fill="{color}"/>'
            )
            parts.append(f'<g class="type-line" data-type="{escape(name)}">{shape}</g>')
    return parts


def _point(chart: TrendChart, index: int) -> str:
    point = chart.points[index]
    figure = point.figure
    assert figure is not None and figure.value is not None
    tip = f"{point.run_id} ({point.label}): {shown(figure.value, chart.percent)}"
    if figure.ci95 is not None:
        low, high = figure.ci95
        tip += f", 95% interval {shown(low, chart.percent)} to {shown(high, chart.percent)}"
    tip += f" (n = {figure.n})"
    x, y = _x(index), _y(figure.value)
    circle = (
        f'<circle class="point" data-run="{escape(point.run_id)}" cx="{x:.1f}" cy="{y:.1f}" '
        f'r="4.5" fill="{COLOR}"><title>{escape(tip)}</title></circle>'
        f'<text x="{x + 7:.1f}" y="{y - 6:.1f}" font-size="10">'
        f"{shown(figure.value, chart.percent)}</text>"
    )
    if point.link is None:
        return circle
    return f'<a href="{escape(point.link)}">{circle}</a>'


def _what(reason: str) -> str:
    """What changed, in two words at most ("dataset file", "judge"): the marker's label; the
    whole reason is its tooltip and the page's caption."""
    return "dataset file" if reason.startswith("dataset file") else reason.split(" ")[0]


def _break(index: int, reasons: list[str]) -> str:
    x = _x(index) - _SLOT / 2
    words = "; ".join(reasons)
    lines = "".join(
        f'<tspan x="{x + 3:.1f}" dy="{0 if i == 0 else 11}">new {escape(_what(reason))}</tspan>'
        for i, reason in enumerate(reasons)
    )
    return (
        f'<g class="break" data-before="{index}"><title>line broken: {escape(words)}</title>'
        f'<line x1="{x:.1f}" y1="{_TOP - 6}" x2="{x:.1f}" y2="{_y(0.0):.1f}" stroke="#b00020" '
        'stroke-width="1.5" stroke-dasharray="5,4"/>'
        f'<text x="{x + 3:.1f}" y="{_TOP + 6}" font-size="9" fill="#b00020">{lines}</text></g>'
    )


def _axes(width: int, percent: bool) -> list[str]:
    parts = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        text = f"{100 * tick:.0f}%" if percent else f"{tick:.2f}"
        parts.append(
            f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{width - _RIGHT}" y2="{y:.1f}" '
            f'stroke="#dddddd"/><text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" '
            f'font-size="11">{text}</text>'
        )
    return parts


def _short_id(run_id: str, most: int = 20) -> str:
    """A run id that fits its slot: whole, or its end after an ellipsis (the date is the
    label above it)."""
    return run_id if len(run_id) <= most else "\u2026" + run_id[-(most - 1) :]


def _x_labels(chart: TrendChart) -> list[str]:
    base = _y(0.0)
    return [
        f'<text x="{_x(i):.1f}" y="{base + 16:.1f}" text-anchor="middle" font-size="10">'
        f"{escape(p.label)}</text>"
        f'<text x="{_x(i):.1f}" y="{base + 29:.1f}" text-anchor="middle" font-size="9" '
        f'fill="#555555">{escape(_short_id(p.run_id))}</text>'
        for i, p in enumerate(chart.points)
    ]


def _legend(types: list[str], y: float) -> list[str]:
    parts = [
        f'<rect x="{_LEFT}" y="{y - 9:.1f}" width="14" height="4" fill="{COLOR}"/>'
        f'<text x="{_LEFT + 18}" y="{y - 4:.1f}" font-size="11">all questions (band: 95%'
        " interval)</text>"
    ]
    for n, name in enumerate(types):
        row = y + _LEGEND_LINE * (n + 1)
        color = TYPE_COLORS[n % len(TYPE_COLORS)]
        parts.append(
            f'<rect x="{_LEFT}" y="{row - 8:.1f}" width="14" height="2" fill="{color}"/>'
            f'<text x="{_LEFT + 18}" y="{row - 4:.1f}" font-size="11">{escape(name)}</text>'
        )
    return parts


def trend_svg(chart: TrendChart) -> str:
    """The chart as an <svg> element."""
    types = chart.types
    width = max(_LEFT + _SLOT * max(1, len(chart.points)), 420) + _RIGHT
    legend_top = _TOP + _PLOT_HEIGHT + _BOTTOM
    height = legend_top + _LEGEND_LINE * (len(types) + 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img" '
        f'aria-label="{escape(chart.title)}">',
        # its own white ground: readable on the UI's dark theme too
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{_LEFT}" y="18" font-size="14" font-weight="bold">{escape(chart.title)}</text>',
        *_axes(width, chart.percent),
    ]
    runs = segments(chart)
    parts += [_band(chart, indexes) for indexes in runs]
    for indexes in runs:
        parts += _type_lines(chart, indexes, types)
    for indexes in runs:
        if len(indexes) > 1:
            line = _path([(_x(i), _y(_value(chart.points[i]))) for i in indexes])
            parts.append(
                f'<path class="line" d="{line}" fill="none" stroke="{COLOR}" stroke-width="2.2"/>'
            )
    parts += [_point(chart, i) for indexes in runs for i in indexes]
    parts += [_break(i, reasons) for i, reasons in sorted(chart.breaks.items())]
    base = _y(0.0)
    parts.append(
        f'<line x1="{_LEFT}" y1="{base:.1f}" x2="{width - _RIGHT}" y2="{base:.1f}" '
        'stroke="#333333"/>'
    )
    parts += _x_labels(chart)
    parts += _legend(types, legend_top)
    parts.append("</svg>")
    return "".join(parts)
