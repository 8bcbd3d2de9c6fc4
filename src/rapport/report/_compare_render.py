"""A comparison of runs as text, CSV and a self-contained HTML page."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rapport.log import Cell, Table

from ._compare import Comparison, RunOverview
from ._html import STYLE, environment
from ._plots import comparison_chart
from ._text import fmt, render_table


def models_text(models: dict[str, str]) -> str:
    """Roles grouped by the model they use: ``agent, user=openai/m; judge=openai/j``."""
    by_spec: dict[str, list[str]] = {}
    for role, spec in models.items():
        by_spec.setdefault(spec, []).append(role)
    return "; ".join(f"{', '.join(roles)}={spec}" for spec, roles in by_spec.items()) or "-"


def options_text(options: dict[str, Any]) -> str:
    """``key=value`` pairs (lists joined by commas)."""
    return " ".join(f"{k}={_value(v)}" for k, v in options.items()) or "-"


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value)


def differing_options(runs: list[RunOverview]) -> list[dict[str, Any]]:
    """Each run's options that are not the same in every run (all of them for one run)."""
    if len(runs) < 2:
        return [dict(r.options) for r in runs]
    keys = dict.fromkeys(k for r in runs for k in r.options)
    differ = [k for k in keys if len({json.dumps(r.options.get(k)) for r in runs}) > 1]
    return [{k: r.options[k] for k in differ if k in r.options} for r in runs]


def runs_table(comparison: Comparison, *, all_options: bool = False) -> Table:
    """One row per run: its setting and size."""
    options = (
        [r.options for r in comparison.runs] if all_options else differing_options(comparison.runs)
    )
    title = "Runs" if all_options or len(comparison.runs) < 2 else "Runs (options that differ)"
    rows: list[list[Cell]] = [
        [
            r.label,
            r.run_id,
            models_text(r.models),
            r.seed,
            options_text(opts),
            r.users,
            r.sessions,
            r.status,
            time.strftime("%Y-%m-%d %H:%M", time.localtime(r.created_at)),
        ]
        for r, opts in zip(comparison.runs, options, strict=True)
    ]
    columns = ["run", "id", "models", "seed", "options", "users", "sessions", "status", "created"]
    return Table(title=title, columns=columns, rows=rows)


def _header(comparison: Comparison, metric: str) -> str:
    return f"{metric} (lower better)" if metric in comparison.lower_is_better else metric


def results_table(comparison: Comparison) -> Table:
    """Run x condition rows, metrics as columns: ``mean [ci_low, ci_high]``."""
    rows: list[list[Cell]] = []
    for row in comparison.rows:
        cells: list[Cell] = [row.run, row.condition]
        for metric in comparison.metrics:
            est = row.estimates.get(metric)
            cells.append(
                "-"
                if est is None
                else f"{fmt(est.mean)} [{fmt(est.ci_low)}, {fmt(est.ci_high)}]"
                + (f" ({est.errors} err)" if est.errors else "")
            )
        rows.append(cells)
    return Table(
        title=f"{comparison.benchmark}: mean over users [95% CI]",
        columns=["run", "condition", *(_header(comparison, m) for m in comparison.metrics)],
        rows=rows,
    )


def differences_table(comparison: Comparison) -> Table:
    """Paired run differences: ``mean [CI] (n users)`` per metric."""
    rows: list[list[Cell]] = []
    for diff in comparison.differences:
        cells: list[Cell] = [f"{diff.run} - {diff.baseline_run}", diff.condition, diff.users]
        for metric in comparison.metrics:
            d = diff.metrics.get(metric)
            cells.append(f"{fmt(d.mean)} [{fmt(d.ci_low)}, {fmt(d.ci_high)}]" if d else "-")
        rows.append(cells)
    return Table(
        title="Paired differences between runs (shared users and problems) [95% CI]",
        columns=[
            "runs",
            "condition",
            "users",
            *(_header(comparison, m) for m in comparison.metrics),
        ],
        rows=rows,
    )


def render_comparison_text(comparison: Comparison) -> str:
    """The comparison as plain text: runs, results, paired differences."""
    parts = [render_table(runs_table(comparison)), render_table(results_table(comparison))]
    if comparison.differences:
        parts.append(render_table(differences_table(comparison)))
    if comparison.unpaired:
        parts.append("\n".join(unpaired_lines(comparison)))
    return "\n\n".join(parts)


def unpaired_lines(comparison: Comparison) -> list[str]:
    """``Not paired: b - a: different seeds ...``, one line per two runs with no paired
    difference."""
    return [f"Not paired: {u.run} - {u.baseline_run}: {u.reason}." for u in comparison.unpaired]


def render_comparisons_text(comparisons: Sequence[Comparison]) -> str:
    """Several comparisons (one per benchmark), each under a heading naming its benchmark
    when there are several."""
    if len(comparisons) == 1:
        return render_comparison_text(comparisons[0])
    return "\n\n".join(
        f"== {c.benchmark}: {len(c.runs)} runs ==\n\n{render_comparison_text(c)}"
        for c in comparisons
    )


CSV_COLUMNS = [
    "run",
    "baseline_run",
    "run_id",
    "benchmark",
    "condition",
    "metric",
    "mean",
    "ci_low",
    "ci_high",
    "users",
    "sessions",
    "errors",
    "seed",
    "models",
    "options",
]


def render_comparison_csv(comparison: Comparison | Sequence[Comparison]) -> str:
    """One row per run, condition and metric (``baseline_run`` empty; ``users`` the users
    its mean is over), then one per paired difference (``baseline_run`` set; ``users`` the
    shared users); several comparisons share the header."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for one in [comparison] if isinstance(comparison, Comparison) else comparison:
        _csv_rows(writer, one)
    return out.getvalue()


def _csv_rows(writer: Any, comparison: Comparison) -> None:
    runs = {r.label: r for r in comparison.runs}
    for row in comparison.rows:
        run = runs[row.run]
        for metric, est in row.estimates.items():
            users = row.users.get(metric, "")
            values = [est.mean, est.ci_low, est.ci_high, users, est.sessions, est.errors]
            writer.writerow([row.run, "", run.run_id, comparison.benchmark, row.condition,
                             metric, *values, *_setting(run)])  # fmt: skip
    for diff in comparison.differences:
        run = runs[diff.run]
        for metric, d in diff.metrics.items():
            values = [d.mean, d.ci_low, d.ci_high, d.users, d.sessions, ""]
            writer.writerow([diff.run, diff.baseline_run, run.run_id, comparison.benchmark,
                             diff.condition, metric, *values, *_setting(run)])  # fmt: skip


def _setting(run: RunOverview) -> list[Any]:
    return [run.seed, json.dumps(run.models), json.dumps(run.options)]


def comparison_parts(comparison: Comparison) -> dict[str, Any]:
    """What a page shows of one comparison: its tables, charts and unpaired runs."""
    return {
        "comparison": comparison,
        "runs": runs_table(comparison, all_options=True),
        "results": results_table(comparison),
        "differences": differences_table(comparison) if comparison.differences else None,
        "charts": [c for m in comparison.metrics if (c := comparison_chart(comparison, m))],
        "unpaired": unpaired_lines(comparison),
    }


def render_comparison_html(comparison: Comparison | Sequence[Comparison]) -> str:
    """The comparison (or several, one per benchmark) as one self-contained HTML page."""
    comparisons = [comparison] if isinstance(comparison, Comparison) else list(comparison)
    return (
        environment()
        .get_template("compare.html")
        .render(style=STYLE, comparisons=[comparison_parts(c) for c in comparisons])
    )


def write_comparison_html(comparison: Comparison | Sequence[Comparison], path: str | Path) -> Path:
    """Write the HTML comparison (or several) to `path`; returns it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_comparison_html(comparison), encoding="utf-8")
    return target
