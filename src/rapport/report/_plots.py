"""Per-session plots as inline PNGs: absolute curves (one line per condition, also for a
single condition) and differences to the baseline, sessions as integers on the axis."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

from ._build import Report
from ._compare import Comparison


def _axes(title: str, ylabel: str) -> tuple[Any, Any]:
    # The object API without pyplot: no global state, and a much cheaper import.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(6, 3.2), dpi=90)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.13, right=0.97, top=0.9, bottom=0.15)
    ax = fig.add_subplot()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("session")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize="medium")
    return fig, ax


def _band(ax: Any, label: str, points: Sequence[Any]) -> None:
    xs = [p.index + 1 for p in points]
    ax.plot(xs, [p.mean for p in points], marker="o", label=label)
    ax.fill_between(xs, [p.ci_low for p in points], [p.ci_high for p in points], alpha=0.2)


def _png(fig: Any, ax: Any) -> str:
    ax.legend(fontsize="small")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def curve_plot(report: Report, metric: str) -> str | None:
    """A PNG (base64) of the metric by session index per condition, with 95% CI bands."""
    series = {c: d[metric] for c, d in report.curves.items() if d.get(metric)}
    if not series:
        return None
    fig, ax = _axes(f"{metric} by session", metric)
    for condition, points in series.items():
        _band(ax, condition, points)
    return _png(fig, ax)


def delta_plot(report: Report, metric: str) -> str | None:
    """A PNG (base64) of condition - baseline by session index, with 95% CI bands."""
    series = {c: d[metric] for c, d in report.deltas.items() if d.get(metric)}
    if not series:
        return None
    fig, ax = _axes(
        f"{metric}: difference to {report.baseline} by session", f"{metric} - {report.baseline}"
    )
    for condition, points in series.items():
        _band(ax, condition, points)
    ax.axhline(0.0, color="#888", linewidth=0.8)
    return _png(fig, ax)


def comparison_plot(comparison: Comparison, metric: str) -> str | None:
    """A PNG (base64) of the metric's mean with its 95% CI per run and condition."""
    points = [
        (f"{r.run} · {r.condition}", r.estimates[metric])
        for r in comparison.rows
        if metric in r.estimates
    ]
    if not points:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 0.9 + 0.32 * len(points)), dpi=90)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ys = list(range(len(points)))[::-1]
    means = [e.mean for _, e in points]
    low = [e.mean - e.ci_low for _, e in points]
    high = [e.ci_high - e.mean for _, e in points]
    ax.errorbar(means, ys, xerr=[low, high], fmt="o", capsize=3)
    ax.set_yticks(ys, [label for label, _ in points], fontsize="small")
    ax.set_xlabel(f"{metric} (mean over users, 95% CI)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode("ascii")
