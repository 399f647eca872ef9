"""The run report's chart: one bar per question type with its 95% interval as a whisker, as a
hand-written inline SVG (no scripts, stylesheets or fonts beyond the generic `sans-serif`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from lme_bench.report.compare_chart import x_label

_COLOR = "#4c78a8"
_BAR_SLOT = 110
_BAR_WIDTH = 44
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 40, 64
_PLOT_HEIGHT = 220


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float | None  # 0-1; None: nothing to show for this label
    ci95: tuple[float, float] | None = None
    n: int = 0


def _y(value: float) -> float:
    return _TOP + _PLOT_HEIGHT * (1 - min(max(value, 0.0), 1.0))


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _axes(width: int) -> list[str]:
    parts = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        parts.append(
            f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{width - _RIGHT}" y2="{y:.1f}" '
            'stroke="#dddddd"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
            f"{100 * tick:.0f}%</text>"
        )
    return parts


def _bar(index: int, bar: Bar) -> str:
    center = _LEFT + (index + 0.5) * _BAR_SLOT
    parts = [f'<g class="bar" data-type="{escape(bar.label)}">']
    tip = f"{bar.label}: {_percent(bar.value)} (n = {bar.n})"
    if bar.ci95 is not None:
        tip += f", 95% interval {_percent(bar.ci95[0])} to {_percent(bar.ci95[1])}"
    if bar.value is not None:
        top = _y(bar.value)
        parts.append(
            f'<rect x="{center - _BAR_WIDTH / 2:.1f}" y="{top:.1f}" width="{_BAR_WIDTH}" '
            f'height="{_y(0.0) - top:.1f}" fill="{_COLOR}"><title>{escape(tip)}</title></rect>'
        )
    label_y = _y(bar.value or 0.0) - 4
    if bar.ci95 is not None:
        low, high = _y(bar.ci95[0]), _y(bar.ci95[1])
        parts.append(
            f'<path class="whisker" d="M{center:.1f},{low:.1f}V{high:.1f}'
            f'M{center - 8:.1f},{low:.1f}h16M{center - 8:.1f},{high:.1f}h16" '
            'stroke="#222222" stroke-width="1.5" fill="none"/>'
        )
        label_y = min(label_y, high - 4)
    parts.append(
        f'<text x="{center + 12:.1f}" y="{label_y:.1f}" font-size="10">{_percent(bar.value)}</text>'
    )
    parts.append(x_label(center, _y(0.0) + 16, bar.label) + "</g>")
    return "".join(parts)


def bars_svg(title: str, bars: Sequence[Bar]) -> str:
    """An <svg> element: a bar per label, its interval's whisker where it has one."""
    width = max(_LEFT + _BAR_SLOT * max(1, len(bars)), _LEFT + 8 * len(title)) + _RIGHT
    height = _TOP + _PLOT_HEIGHT + _BOTTOM
    base = _y(0.0)
    return "".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img" '
            f'aria-label="{escape(title)}">',
            f'<text x="{_LEFT}" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
            *_axes(width),
            *(_bar(i, b) for i, b in enumerate(bars)),
            f'<line x1="{_LEFT}" y1="{base:.1f}" x2="{width - _RIGHT}" y2="{base:.1f}" '
            'stroke="#333333"/>',
            "</svg>",
        ]
    )
