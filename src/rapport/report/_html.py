"""The self-contained HTML report (a Jinja2 template): tables, the paired differences, charts
by session (inline SVG, as the viewer draws them), errors and the run's description."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from jinja2 import Environment
from markupsafe import Markup

from rapport.log import Table
from rapport.store import RUN_FILE

from ._build import Report
from ._charts import chart_svg
from ._plots import curve_chart, delta_chart
from ._templates import new_environment
from ._text import cell_text, paired_table, summary_table

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.meta { color: #555; }
figure.chart { display: inline-block; margin: 0 1rem 1rem 0; }
.legend { font-size: 0.85em; }
code { font-size: 0.85em; word-break: break-all; }
"""


@cache
def environment() -> Environment:
    """The report's template environment (autoescaped)."""
    env = new_environment()
    env.globals["text"] = cell_text
    env.globals["table"] = table_html
    env.globals["chart_svg"] = chart_svg
    return env


def table_html(table: Table) -> Markup:
    """A table as an HTML ``<table>`` with a heading."""
    return Markup(environment().get_template("table.html").render(t=table))


def _usage_table(report: Report) -> Table:
    rows: list[list[str | int | float | None]] = [
        [role, u.prompt, u.completion] for role, u in report.usage.items()
    ]
    return Table(title="Tokens by role", columns=["role", "prompt", "completion"], rows=rows)


def _errors_table(report: Report) -> Table:
    rows: list[list[str | int | float | None]] = [
        [e.condition, e.user_id, e.session, e.where, e.message] for e in report.error_list
    ]
    return Table(
        title=f"Errors ({report.errors})",
        columns=["condition", "user", "session", "where", "message"],
        rows=rows,
    )


def render_html(report: Report) -> str:
    """The whole report as one HTML page with everything embedded."""
    curves = [c for m in report.metrics if (c := curve_chart(report, m))]
    deltas = [c for m in report.metrics if (c := delta_chart(report, m))]
    return (
        environment()
        .get_template("report.html")
        .render(
            report=report,
            style=STYLE,
            summary=summary_table(report),
            paired=paired_table(report) if report.paired else None,
            curves=curves,
            deltas=deltas,
            usage=_usage_table(report),
            errors=_errors_table(report),
        )
    )


def write_html(report: Report, path: str | Path | None = None) -> Path:
    """Write the HTML report (default: ``report.html`` in the run dir); returns the path.

    A run whose store only its owner can read (a study's: it holds what participants wrote)
    gets a report only its owner can read, from the moment the file exists."""
    target = Path(path) if path is not None else Path(report.run_dir) / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    private = _is_private(Path(report.run_dir) / RUN_FILE)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o666)
    if private:
        os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(render_html(report))
    return target


def _is_private(store: Path) -> bool:
    """Whether only its owner can read a file (False when it cannot be read)."""
    try:
        return store.stat().st_mode & 0o077 == 0
    except OSError:
        return False
