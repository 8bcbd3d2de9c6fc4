"""Reports of a run: conditions x metrics with CIs, per-session curves and deltas, paired
differences, usage, errors, the run's description; several runs compared side by side; text,
CSV, JSON and HTML."""

from rapport.log import Table

from ._build import Aggregates, ErrorEntry, Report, TokenUsage, aggregate, build_report
from ._charts import COLORS, Chart, chart, chart_svg, condition_colors
from ._compare import (
    CompareError,
    Comparison,
    ConditionRow,
    RunDifference,
    RunOverview,
    compare_runs,
    find_runs,
    is_run_dir,
    run_overview,
)
from ._compare_render import (
    differences_table,
    models_text,
    render_comparison_csv,
    render_comparison_html,
    render_comparison_text,
    results_table,
    runs_table,
    write_comparison_html,
)
from ._curves import CurvePoint, PairedDifference, paired_differences, session_curves
from ._describe import ModelUse, RunDescription, describe_run
from ._export import (
    RunTables,
    export_rows,
    export_sessions,
    load,
    run_columns,
    session_row,
    turn_rows,
)
from ._html import environment, render_html, table_html, write_html
from ._plots import comparison_chart, curve_chart, delta_chart
from ._text import (
    fmt,
    markdown_table,
    paired_table,
    render_csv,
    render_markdown,
    render_table,
    render_text,
    summary_table,
)

__all__ = [
    "COLORS",
    "Aggregates",
    "Chart",
    "CompareError",
    "Comparison",
    "ConditionRow",
    "CurvePoint",
    "ErrorEntry",
    "ModelUse",
    "PairedDifference",
    "Report",
    "RunDescription",
    "RunDifference",
    "RunOverview",
    "RunTables",
    "Table",
    "TokenUsage",
    "aggregate",
    "build_report",
    "chart",
    "chart_svg",
    "compare_runs",
    "comparison_chart",
    "condition_colors",
    "curve_chart",
    "delta_chart",
    "describe_run",
    "differences_table",
    "environment",
    "export_rows",
    "export_sessions",
    "find_runs",
    "fmt",
    "is_run_dir",
    "load",
    "markdown_table",
    "models_text",
    "paired_differences",
    "paired_table",
    "render_comparison_csv",
    "render_comparison_html",
    "render_comparison_text",
    "render_csv",
    "render_html",
    "render_markdown",
    "render_table",
    "render_text",
    "results_table",
    "run_columns",
    "run_overview",
    "runs_table",
    "session_curves",
    "session_row",
    "summary_table",
    "table_html",
    "turn_rows",
    "write_comparison_html",
    "write_html",
]
