"""``rapport compare RUN_DIR... [--format table|json|csv] [--html FILE]``: runs side by side."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rapport.envs import benchmark_class
from rapport.log import SessionRecord, Table
from rapport.report import (
    CompareError,
    compare_by_benchmark,
    find_runs,
    is_run_dir,
    markdown_table,
    render_comparison_csv,
    render_comparisons_text,
    write_comparison_html,
)
from rapport.store import RunStore

from ._errors import UsageError, directory_path, output_file, reading_stores


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``compare`` command."""
    parser = subparsers.add_parser(
        "compare",
        help="compare runs: conditions x metrics across runs, paired differences",
        description="Show runs side by side, one comparison per benchmark: each run's models "
        "per role, seed and options, every condition's metrics (mean over users, 95% "
        "bootstrap CI), and, for two runs that share users and problems, the paired "
        "difference of each condition both have (or why there is none). A folder of runs "
        "stands for the runs in it. The runs are only read; --html writes the comparisons "
        "as one HTML page. --format json prints one comparison object, or a list of them "
        "when the runs are of several benchmarks.",
    )
    parser.add_argument("run_dirs", metavar="RUN_DIR", nargs="+", help="run dirs (or folders)")
    parser.add_argument(
        "--format", choices=("table", "json", "csv"), default="table", help="output format"
    )
    parser.add_argument("--html", metavar="FILE", help="also write the comparison as HTML")
    parser.add_argument(
        "--paper-tables",
        action="store_true",
        help="also print the benchmark's tables across runs as its paper lays them out "
        "(PrefIx: Tables 2-5, one run per agent model, labelled by the agent's model)",
    )
    parser.set_defaults(handler=handle)


def paper_tables(dirs: list[Path]) -> list[Table]:
    """The benchmark's own tables across the runs (each labelled by its agent's model).

    Raises:
        UsageError: the runs are of different benchmarks.
    """
    runs: dict[str, list[SessionRecord]] = {}
    names = set()
    for path in dirs:
        with RunStore.open_readonly(path) as store:
            run, records = store.run(), store.sessions()
        names.add(run.benchmark)
        label = run.config.models.get("agent") or run.config.models.get("all") or path.name
        runs[label if label not in runs else f"{label} ({path.name})"] = records
    if len(names) != 1:
        raise UsageError(f"--paper-tables needs runs of one benchmark, got {sorted(names)}")
    return benchmark_class(names.pop()).across_runs_tables(runs)


def run_dirs(texts: list[str]) -> list[Path]:
    """The run dirs named, a folder of runs standing for the runs in it.

    Raises:
        UsageError: a dir that is missing, holds no run, or is a folder without runs.
    """
    dirs: list[Path] = []
    for text in texts:
        path = directory_path("RUN_DIR", text)
        if is_run_dir(path):
            dirs.append(path)
        elif path.is_dir() and (inside := find_runs(path)):
            dirs.extend(inside)
        elif path.is_dir():
            raise UsageError(f"no run found in {path} (no run.sqlite in it or in its folders)")
        else:
            raise UsageError(f"no run found in {path} (not a directory)")
    return dirs


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    dirs = run_dirs(args.run_dirs)
    target = output_file("--html", args.html) if args.html is not None else None
    try:
        with reading_stores(*dirs):
            comparisons = compare_by_benchmark(dirs)
            tables = paper_tables(dirs) if args.paper_tables else []
    except (FileNotFoundError, CompareError) as exc:
        raise UsageError(str(exc)) from exc
    if args.format == "json":
        documents = [c.to_json() for c in comparisons]
        document: Any = documents[0] if len(documents) == 1 else {"comparisons": documents}
        if tables:
            document["paper_tables"] = [t.model_dump(mode="json") for t in tables]
        print(json.dumps(document if tables or len(documents) == 1 else documents, indent=2))
    elif args.format == "csv":
        print(render_comparison_csv(comparisons), end="")
    else:
        print(render_comparisons_text(comparisons))
    for table in tables if args.format != "json" else []:
        print(f"\n{table.title}\n\n{markdown_table(table)}")
    if target is not None:
        try:
            path = write_comparison_html(comparisons, target)
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
        print(f"comparison: {path}", file=sys.stdout if args.format == "table" else sys.stderr)
    return 0
