"""Per-session charts, the one plotting path of the HTML report and the viewer: a line per
condition with its 95% CI band, sessions numbered from 1 on the axis, a color per condition
that is the same in every chart of a run, drawn as inline SVG (with a link on every point
where the viewer gives one)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from markupsafe import Markup, escape

from ._templates import templates

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
WIDTH, HEIGHT = 560, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 36


class Point(Protocol):
    """What a chart needs of a point (`CurvePoint`, `DeltaPoint`)."""

    index: int
    mean: float
    ci_low: float
    ci_high: float
    users: int


@dataclass
class Dot:
    """A point on the chart, with where it links to."""

    x: float
    y: float
    href: str | None
    """Where the point links to (None: nowhere)."""
    label: str


@dataclass
class Series:
    """One condition's line."""

    name: str
    color: str
    line: str
    """SVG ``points`` of the polyline."""
    band: str
    """SVG ``points`` of the CI polygon."""
    dots: list[Dot]


@dataclass
class Tick:
    """An axis tick at a pixel position."""

    at: float
    label: str


@dataclass
class Chart:
    """Everything the SVG template draws."""

    title: str
    width: int
    height: int
    series: list[Series]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    zero: float | None
    """Pixel height of y = 0 when it is on the chart (difference charts draw it)."""


def condition_colors(conditions: Sequence[str]) -> dict[str, str]:
    """A color per condition, in the run's order (every chart of a run draws a condition in
    its color, differences included)."""
    return {c: COLORS[k % len(COLORS)] for k, c in enumerate(conditions)}


def _nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    if math.isclose(low, high):
        low, high = low - 0.5, high + 0.5
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    first = math.floor(low / step) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def chart(
    title: str,
    series: Mapping[str, Sequence[Point]],
    href: Callable[[str, int], str] | None = None,
    *,
    zero_line: bool = False,
    colors: Mapping[str, str] | None = None,
) -> Chart | None:
    """A chart of `series` (condition -> points by session index); None when empty.

    Args:
        title: shown above the chart.
        series: condition -> its points.
        href: (condition, session index) -> the link of that point (None: no links).
        zero_line: draw y = 0 (for differences).
        colors: condition -> color, so a condition keeps its color across charts
            (default: `COLORS` in the order of `series`).
    """
    points = [p for pts in series.values() for p in pts]
    if not points:
        return None
    indices = sorted({p.index for p in points})
    lows = [p.ci_low for p in points] + ([0.0] if zero_line else [])
    highs = [p.ci_high for p in points] + ([0.0] if zero_line else [])
    y_values = _nice_ticks(min(lows), max(highs))
    y_min, y_max = y_values[0], y_values[-1]
    x_min, x_max = indices[0], max(indices[-1], indices[0] + 1)

    def px(index: float) -> float:
        return LEFT + (index - x_min) / (x_max - x_min) * (WIDTH - LEFT - RIGHT)

    def py(value: float) -> float:
        return TOP + (y_max - value) / (y_max - y_min) * (HEIGHT - TOP - BOTTOM)

    drawn = []
    for k, (name, pts) in enumerate(series.items()):
        ordered = sorted(pts, key=lambda p: p.index)
        line = " ".join(f"{px(p.index):.1f},{py(p.mean):.1f}" for p in ordered)
        upper = [f"{px(p.index):.1f},{py(p.ci_high):.1f}" for p in ordered]
        lower = [f"{px(p.index):.1f},{py(p.ci_low):.1f}" for p in reversed(ordered)]
        dots = [
            Dot(
                px(p.index),
                py(p.mean),
                href(name, p.index) if href is not None else None,
                f"{name}, session {p.index + 1}: {p.mean:.3g} "
                f"[{p.ci_low:.3g}, {p.ci_high:.3g}], {p.users} users",
            )
            for p in ordered
        ]
        color = (colors or {}).get(name, COLORS[k % len(COLORS)])
        drawn.append(Series(name, color, line, " ".join(upper + lower), dots))
    step = max(1, math.ceil(len(range(x_min, x_max + 1)) / 12))
    return Chart(
        title=title,
        width=WIDTH,
        height=HEIGHT,
        series=drawn,
        x_ticks=[Tick(px(i), str(i + 1)) for i in range(x_min, x_max + 1, step)],
        y_ticks=[Tick(py(v), f"{v + 0.0:g}") for v in y_values],  # + 0.0: no "-0"
        zero=py(0.0) if zero_line and y_min <= 0 <= y_max else None,
    )


def chart_svg(drawn: Chart | None) -> Markup:
    """A chart as an inline ``<figure>`` with its SVG and legend ("" for no chart)."""
    if drawn is None:
        return Markup("")
    return Markup(templates().get_template("chart.svg").render(c=drawn))


class Interval(Protocol):
    """What an interval chart needs of an estimate."""

    mean: float
    ci_low: float
    ci_high: float


def interval_chart(title: str, rows: Sequence[tuple[str, Interval, str]]) -> Markup:
    """One row per (label, estimate, colour): the mean as a dot, its CI as a bar, drawn as
    an inline ``<figure>`` with its SVG ("" for no rows)."""
    if not rows:
        return Markup("")
    label_width, row_height = 260, 22
    height = TOP + BOTTOM + row_height * len(rows)
    values = _nice_ticks(min(e.ci_low for _, e, _ in rows), max(e.ci_high for _, e, _ in rows))
    low, high = values[0], values[-1]

    def px(value: float) -> float:
        return label_width + (value - low) / (high - low) * (WIDTH - label_width - RIGHT)

    parts = []
    for k, (label, e, color) in enumerate(rows):
        y = TOP + row_height * k + row_height / 2
        parts.append(
            f'<text x="{label_width - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#444">'
            f"{escape(label)}</text>"
            f'<line x1="{px(e.ci_low):.1f}" x2="{px(e.ci_high):.1f}" y1="{y:.1f}" '
            f'y2="{y:.1f}" stroke="{escape(color)}" stroke-width="2"/>'
            f'<circle cx="{px(e.mean):.1f}" cy="{y:.1f}" r="5" fill="{escape(color)}">'
            f"<title>{escape(label)}: {e.mean:.3g} [{e.ci_low:.3g}, {e.ci_high:.3g}]</title>"
            "</circle>"
        )
    axis = height - BOTTOM + 14
    ticks = "".join(
        f'<text x="{px(v):.1f}" y="{axis}" text-anchor="middle" fill="#444">{v + 0.0:g}</text>'
        for v in values
    )
    return Markup(
        f'<figure class="chart"><figcaption>{escape(title)}</figcaption>'
        f'<svg width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(title)}" font-family="system-ui, sans-serif" font-size="11">'
        f"{''.join(parts)}{ticks}</svg></figure>"
    )
