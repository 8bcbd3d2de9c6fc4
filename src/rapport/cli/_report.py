"""``rapport report DIR [--format table|json|csv|markdown] [--html [FILE]]``: a run's results."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rapport.report import (
    Report,
    build_report,
    render_csv,
    render_markdown,
    render_text,
    write_html,
)
from rapport.store import RUN_FILE

from ._errors import UsageError, directory_path, output_file, output_path, reading_stores

_DEFAULT = "report.html in the run dir"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``report`` command."""
    parser = subparsers.add_parser(
        "report",
        help="show a run's results and write its HTML report",
        description="Print a run's metrics (mean over users, 95% bootstrap CI). The table "
        "format also writes report.html in the run dir (when it is writable); json, csv and "
        "markdown (every table, as docs/ quotes it) write nothing but stdout unless --html "
        "is given. The run's store is only read.",
    )
    parser.add_argument("run_dir", metavar="DIR", help="the run dir")
    parser.add_argument(
        "--format",
        choices=("table", "json", "csv", "markdown"),
        default="table",
        help="output format",
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        nargs="?",
        const=_DEFAULT,
        help="write the HTML report (to FILE; default: report.html in the run dir)",
    )
    parser.set_defaults(handler=handle)


def html_target(run_dir: Path, html: str | None, output_format: str) -> Path | None:
    """Where the HTML report goes, or None when this invocation writes none.

    Raises:
        UsageError: the target would overwrite the run's store, or is a directory.
    """
    if html is None and output_format != "table":
        return None
    target = run_dir / "report.html" if html in (None, _DEFAULT) else output_path("--html", html)
    if html is None and not os.access(run_dir, os.W_OK):
        return None
    if target.resolve() == (run_dir / RUN_FILE).resolve():
        raise UsageError(f"--html {target} would overwrite the run's store")
    return output_file("--html", target)


def _write(report: Report, target: Path) -> Path:
    try:
        return write_html(report, target)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    run_dir = directory_path("DIR", args.run_dir)
    try:
        with reading_stores(run_dir):
            report = build_report(run_dir)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from exc
    target = html_target(run_dir, args.html, args.format)
    # Written before anything is printed: a target that cannot be written is one line.
    path = _write(report, target) if target is not None else None
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    elif args.format == "csv":
        print(render_csv(report), end="")
    elif args.format == "markdown":
        print(render_markdown(report), end="")
    else:
        print(render_text(report))
    if path is not None:
        print(f"report: {path}", file=sys.stdout if args.format == "table" else sys.stderr)
    elif args.format == "table":
        print(f"report.html not written: {run_dir} is not writable (use --html FILE)")
    return 0
