"""A report's per-session charts: absolute curves (one line per condition, also for a single
condition, or per condition and series where the benchmark splits its sessions into series)
and differences to the baseline; the HTML report and the viewer draw the same."""

from __future__ import annotations

from collections.abc import Callable

from markupsafe import Markup

from ._build import Report
from ._charts import Chart, chart, condition_colors, interval_chart
from ._compare import Comparison


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
    return chart(f"{metric} by session", series, _links(report, href), colors=_colors(report))


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
    return chart(title, series, _links(report, href), zero_line=True, colors=_colors(report))


def _links(
    report: Report, href: Callable[[str, int], str] | None
) -> Callable[[str, int], str] | None:
    """`href` for a chart whose lines may be a benchmark's series (``condition · series``
    by position): such a point links to its condition's session."""
    if href is None or not report.series_origins:
        return href
    origins = report.series_origins

    def link(name: str, index: int) -> str:
        condition, first = origins.get(name, (name, 0))
        return href(condition, first + index)

    return link


def _colors(report: Report) -> dict[str, str]:
    return condition_colors(list(report.conditions))


def comparison_chart(comparison: Comparison, metric: str) -> Markup:
    """The metric's mean with its 95% CI per run and condition, as an inline SVG ("" when
    no run has it); a condition has one colour in every run."""
    rows = [r for r in comparison.rows if metric in r.estimates]
    if not rows:
        return Markup("")
    colors = condition_colors(list(dict.fromkeys(r.condition for r in rows)))
    return interval_chart(
        f"{metric} (mean over users, 95% CI)",
        [(f"{r.run} · {r.condition}", r.estimates[metric], colors[r.condition]) for r in rows],
    )
