"""``rapport report DIR [--format table|json|csv] [--html FILE]``: a run's results."""

from __future__ import annotations

import argparse
import json

from rapport.report import build_report, render_csv, render_text, write_html

from ._errors import UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``report`` command."""
    parser = subparsers.add_parser(
        "report",
        help="show a run's results and write its HTML report",
        description="Print a run's metrics (mean over users, 95%% bootstrap CI) and write "
        "report.html in the run dir (or --html FILE).",
    )
    parser.add_argument("run_dir", metavar="DIR", help="the run dir")
    parser.add_argument(
        "--format", choices=("table", "json", "csv"), default="table", help="output format"
    )
    parser.add_argument("--html", metavar="FILE", help="where to write the HTML report")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    try:
        report = build_report(args.run_dir)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from exc
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    elif args.format == "csv":
        print(render_csv(report), end="")
    else:
        print(render_text(report))
    path = write_html(report, args.html)
    if args.format == "table":
        print(f"report: {path}")
    return 0
