"""A report's per-session charts: absolute curves (one line per condition, also for a single
condition) and differences to the baseline; the HTML report and the viewer draw the same."""

from __future__ import annotations

from collections.abc import Callable

from ._build import Report
from ._charts import Chart, chart, condition_colors


def curve_chart(
    report: Report, metric: str, href: Callable[[str, int], str] | None = None
) -> Chart | None:
    """The metric by session per condition, with 95% CI bands (None: no data).

    Args:
        report: the run's report.
        metric: one of its metrics.
        href: (condition, session index) -> the link of a point (None: no links).
    """
    series = {c: d[metric] for c, d in report.curves.items() if d.get(metric)}
    return chart(f"{metric} by session", series, href, colors=_colors(report))


def delta_chart(
    report: Report, metric: str, href: Callable[[str, int], str] | None = None
) -> Chart | None:
    """Condition - baseline by session, with 95% CI bands and the zero line (None: no data).

    Args:
        report: the run's report.
        metric: one of its metrics.
        href: (condition, session index) -> the link of a point (None: no links).
    """
    series = {c: d[metric] for c, d in report.deltas.items() if d.get(metric)}
    title = f"{metric} - {report.baseline} by session"
    return chart(title, series, href, zero_line=True, colors=_colors(report))


def _colors(report: Report) -> dict[str, str]:
    return condition_colors(list(report.conditions))
