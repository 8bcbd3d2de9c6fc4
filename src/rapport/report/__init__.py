"""Reports of a run: conditions x metrics with CIs, per-session curves and deltas, paired
differences, usage, errors, the run's description; text, CSV, JSON and HTML."""

from rapport.log import Table

from ._build import (
    Aggregates,
    ErrorEntry,
    RepeatedError,
    Report,
    TokenUsage,
    aggregate,
    build_report,
)
from ._curves import CurvePoint, PairedDifference, paired_differences, session_curves
from ._describe import ModelUse, RunDescription, describe_run
from ._export import export_rows, export_sessions, session_row, turn_rows
from ._html import environment, render_html, table_html, write_html
from ._plots import curve_plot, delta_plot
from ._text import fmt, paired_table, render_csv, render_table, render_text, summary_table

__all__ = [
    "Aggregates",
    "CurvePoint",
    "ErrorEntry",
    "ModelUse",
    "PairedDifference",
    "RepeatedError",
    "Report",
    "RunDescription",
    "Table",
    "TokenUsage",
    "aggregate",
    "build_report",
    "curve_plot",
    "delta_plot",
    "describe_run",
    "environment",
    "export_rows",
    "export_sessions",
    "fmt",
    "paired_differences",
    "paired_table",
    "render_csv",
    "render_html",
    "render_table",
    "render_text",
    "session_curves",
    "session_row",
    "summary_table",
    "table_html",
    "turn_rows",
    "write_html",
]
