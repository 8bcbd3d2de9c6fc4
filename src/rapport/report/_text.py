"""Plain-text and CSV renderings of a report."""

from __future__ import annotations

import csv
import html
import io
import math
import re

from rapport.eval import MAX_ATTEMPTS, Estimate
from rapport.log import Cell, Table

from ._build import Report
from ._describe import preset_line


def fmt(value: float) -> str:
    """A number with precision that suits its size (45.0, 0.452, 1234)."""
    if math.isnan(value):
        return "nan"
    size = abs(value)
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}"


def metric_header(report: Report, metric: str) -> str:
    """A metric's column title in the tables of means over users: where the benchmark
    declares the metric on one regime, the title says these means pool every regime (each
    user's eval sessions, whatever their regime); lower-is-better metrics are marked."""
    notes = []
    if any(d.name == metric and d.regime for d in report.declared):
        notes.append("regimes pooled")
    if metric in report.lower_is_better:
        notes.append("lower better")
    return f"{metric} ({', '.join(notes)})" if notes else metric


def summary_table(report: Report) -> Table:
    """Conditions x metrics, each cell ``mean [ci_low, ci_high]``, plus error counts."""
    columns = ["condition", *(metric_header(report, m) for m in report.metrics), "errors"]
    errors = report.errors_by_condition
    rows: list[list[Cell]] = []
    for condition, estimates in report.conditions.items():
        cells: list[Cell] = [condition]
        for metric in report.metrics:
            est = estimates.get(metric)
            cells.append(_estimate_cell(est) if est else "-")
        cells.append(errors.get(condition, 0))
        rows.append(cells)
    return Table(title=f"{report.benchmark}: mean over users [95% CI]", columns=columns, rows=rows)


def _estimate_cell(est: Estimate) -> str:
    """``mean [lo, hi]``; with error sessions in the condition, how many sessions the mean
    is over and how many failed, so a mean over fewer sessions never passes unnoticed."""
    cell = f"{fmt(est.mean)} [{fmt(est.ci_low)}, {fmt(est.ci_high)}]"
    if est.errors:
        cell += f" (n={est.sessions}, {est.errors} err)"
    return cell


def paired_table(report: Report) -> Table:
    """Conditions x metrics: the paired overall difference to the baseline ``mean [CI]``."""
    rows: list[list[Cell]] = []
    for condition, diffs in report.paired.items():
        cells: list[Cell] = [condition]
        for metric in report.metrics:
            d = diffs.get(metric)
            cells.append(
                f"{fmt(d.mean)} [{fmt(d.ci_low)}, {fmt(d.ci_high)}] ({d.users} users)" if d else "-"
            )
        rows.append(cells)
    columns = ["condition", *(metric_header(report, m) for m in report.metrics)]
    return Table(
        title=f"{report.benchmark}: condition - {report.baseline} [95% CI]",
        columns=columns,
        rows=rows,
    )


_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 control characters but tab and newline (ESC starts a terminal's escape
sequences: titles, screen changes, clipboard writes; CR overwrites a line), and the
bidirectional overrides that make text read differently from what it is."""


def printable(text: str) -> str:
    """Text safe to print to a terminal: every control character but tab and newline, and
    every bidirectional override, shown as its escape (``\\x1b``) instead of acting."""
    return _UNPRINTABLE.sub(lambda m: ascii(m.group())[1:-1], text)


def markdown_text(text: str) -> str:
    """Free text inside Markdown: printable, its HTML shown as text (a renderer that allows
    raw HTML would otherwise run a participant's ``<script>`` or ``<img onerror>``)."""
    return html.escape(printable(text), quote=False)


def cell_text(value: Cell) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return fmt(value)
    return str(value)


def render_table(table: Table) -> str:
    """A table as aligned plain text."""
    grid = [
        [printable(c) for c in table.columns],
        *([printable(cell_text(c)) for c in row] for row in table.rows),
    ]
    widths = [max(len(row[i]) for row in grid if i < len(row)) for i in range(len(table.columns))]
    lines = [printable(table.title)]
    for n, row in enumerate(grid):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_text(report: Report) -> str:
    """The report as text: the summary table, extra tables, the retrieval each condition
    used (where one retrieves) and a usage line."""
    parts = [render_table(summary_table(report))]
    if report.paired:
        parts.append(render_table(paired_table(report)))
    parts.extend(render_table(t) for t in report.tables)
    if report.description is not None:
        parts.append(preset_line(report.description))
    retrieval = report.description.retrieval if report.description else {}
    used = {c: r for c, r in retrieval.items() if r != "none"}
    if used:
        parts.append("Retrieval: " + "; ".join(f"{c}: {r}" for c, r in used.items()))
    parts.append(
        f"{report.sessions} sessions ({report.eval_sessions} eval), {report.users} users, "
        f"{report.errors} errors, {report.model_calls} model calls "
        f"(+{report.cached_calls} cached, {report.failed_calls} failed), "
        f"{report.error_sessions} error sessions"
    )
    if report.repeated_errors:
        parts.append(repeated_errors_line(report))
    if report.part_done:
        parts.append(report.part_done)
    return printable("\n\n".join(parts))


def markdown_table(table: Table) -> str:
    """A table as a Markdown pipe table (``|`` in a cell escaped, a line break a space),
    without its title."""

    def cell(text: str) -> str:
        return markdown_text(text).replace("|", "\\|").replace("\n", " ")

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(cell(c) for c in cells) + " |"

    lines = [row(table.columns), "|" + "---|" * len(table.columns)]
    lines += [row([cell_text(c) for c in cells]) for cells in table.rows]
    return "\n".join(lines)


def render_markdown(report: Report) -> str:
    """Every table of the text report as Markdown, each under a ``### title`` line: what
    docs/ copies, and what the docs-vs-results check compares with."""
    tables = [summary_table(report)]
    if report.paired:
        tables.append(paired_table(report))
    tables += report.tables
    return (
        "\n\n".join(f"### {markdown_text(t.title)}\n\n{markdown_table(t)}" for t in tables) + "\n"
    )


def repeated_errors_line(report: Report) -> str:
    """The error sessions played more than once, with how many times, in one line."""
    shown = [
        f"{e.condition}/{e.user_id}/{e.session} ({e.attempts} times)"
        for e in report.repeated_errors[:4]
    ]
    more = len(report.repeated_errors) - len(shown)
    return (
        f"Error sessions played more than once: {len(report.repeated_errors)} "
        f"({', '.join(shown)}{f', {more} more' if more else ''}); a resume retries one only "
        f"while it has been played fewer than --max-attempts times (default {MAX_ATTEMPTS})"
    )


def render_csv(report: Report) -> str:
    """One row per condition and metric: mean and CI bounds."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["condition", "metric", "mean", "ci_low", "ci_high", "sessions", "errors"])
    for condition, estimates in report.conditions.items():
        for metric in report.metrics:
            est = estimates.get(metric)
            if est is not None:
                writer.writerow(
                    [condition, metric, est.mean, est.ci_low, est.ci_high, est.sessions, est.errors]
                )
    return out.getvalue()
