"""``rapport run BENCHMARK [flags] [--benchmark-option VALUE ...]``: run or resume an experiment."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from rapport.eval import (
    Experiment,
    ExperimentConfig,
    ExperimentError,
    RunResult,
    prepare_experiment,
)
from rapport.report import build_report, render_text, write_html

from ._config import add_experiment_flags, config_from_args
from ._errors import UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` command."""
    parser = subparsers.add_parser(
        "run",
        help="run (or resume) an experiment",
        description="Run an experiment; running it again on the same --run-dir resumes it. "
        "Further --name VALUE pairs are options of the benchmark.",
        # Benchmark options must reach the benchmark whole: '--user rules' is not '--users'.
        allow_abbrev=False,
    )
    parser.add_argument("benchmark", help="benchmark name (collab, mpt, prefix, gym ...)")
    add_experiment_flags(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=handle)


def prepare(config: ExperimentConfig) -> Experiment:
    """Check everything before anything is written; bad input becomes a `UsageError`."""
    try:
        return prepare_experiment(config)
    except ExperimentError as exc:
        raise UsageError(str(exc)) from exc


def execute(experiment: Experiment, *, progress: bool = True) -> int:
    """Run a prepared experiment, then print the table and write the HTML report."""
    run_dir = experiment.config.run_dir
    try:
        result = asyncio.run(experiment.run(progress=progress))
    except ExperimentError as exc:
        raise UsageError(str(exc)) from exc
    except KeyboardInterrupt:
        print(
            f"rapport: interrupted; finished sessions are saved in {run_dir}. "
            "Run the same command again to resume.",
            file=sys.stderr,
        )
        return 130
    print(summary_line(result), file=sys.stderr)
    print_report(run_dir)
    return 0


def summary_line(result: RunResult) -> str:
    """What this invocation did, in one line."""
    return (
        f"ran {result.sessions_run} sessions ({result.sessions_skipped} already done), "
        f"{result.errors} with errors, {result.model_calls} model calls "
        f"(+{result.cached_calls} cached)"
    )


def print_report(run_dir: Path) -> None:
    """Print the run's table and write ``report.html`` beside it."""
    report = build_report(run_dir)
    print(render_text(report))
    print(f"report: {write_html(report)}")


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    config = config_from_args(args)
    return execute(prepare(config), progress=not args.no_progress)
