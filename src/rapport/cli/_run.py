"""``rapport run BENCHMARK [flags] [--benchmark-option VALUE ...]``: run or resume an experiment."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from rapport.eval import (
    MAX_ATTEMPTS,
    MAX_CONSECUTIVE_FAILURES,
    Experiment,
    ExperimentConfig,
    ExperimentError,
    ProviderOutage,
    RunResult,
    prepare_experiment,
)
from rapport.report import build_report, render_text, write_html

from ._config import add_experiment_flags, config_from_args
from ._errors import UsageError, reading_stores
from ._options_help import BenchmarkHelp
from ._plan import add_plan_flags, plan_requested, print_plan
from ._rundirs import point_latest, with_new_run_dir
from ._signals import say_stopped


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` command."""
    parser = subparsers.add_parser(
        "run",
        help="run an experiment (or resume it on its --run-dir)",
        description="Run an experiment, in a new dir under runs/ (runs/BENCHMARK-TIME-ID, "
        "runs/latest points at it) unless --run-dir names one; running it again on the same "
        "--run-dir, or `rapport resume RUN_DIR`, resumes it. Further --name VALUE pairs are "
        "options of the benchmark.",
        # Benchmark options must reach the benchmark whole: '--user rules' is not '--users'.
        allow_abbrev=False,
        add_help=False,
    )
    parser.add_argument(
        "-h", "--help", action=BenchmarkHelp, help="show this help and the benchmark's options"
    )
    parser.add_argument("benchmark", help="benchmark name (collab, mpt, prefix, gym ...)")
    add_experiment_flags(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_resume_flags(parser)
    add_plan_flags(parser)
    parser.set_defaults(handler=handle)


def add_resume_flags(parser: argparse.ArgumentParser) -> None:
    """``--retry-errors`` / ``--keep-errors``, ``--max-failures N`` and ``--max-attempts N``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--retry-errors",
        dest="retry_errors",
        action="store_true",
        default=True,
        help="on resume, run sessions stored with errors again (the default)",
    )
    group.add_argument(
        "--keep-errors",
        dest="retry_errors",
        action="store_false",
        help="on resume, keep sessions stored with errors as they are",
    )
    parser.add_argument(
        "--max-failures",
        metavar="N",
        default=str(MAX_CONSECUTIVE_FAILURES),
        help="stop (exit 1) after N sessions in a row fail on a model provider; 0: never "
        f"(default {MAX_CONSECUTIVE_FAILURES})",
    )
    parser.add_argument(
        "--max-attempts",
        metavar="N",
        default=str(MAX_ATTEMPTS),
        help="on resume, keep an error session played N times as it is instead of retrying "
        f"it; 0: no limit (default {MAX_ATTEMPTS})",
    )


def resume_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run's ``retry_errors``, ``max_failures`` and ``max_attempts`` from the flags.

    Raises:
        UsageError: ``--max-failures`` or ``--max-attempts`` is not a count.
    """
    return {
        "retry_errors": getattr(args, "retry_errors", True),
        "max_failures": _count(args, "max_failures", MAX_CONSECUTIVE_FAILURES),
        "max_attempts": _count(args, "max_attempts", MAX_ATTEMPTS),
    }


def _count(args: argparse.Namespace, name: str, default: int) -> int:
    raw = getattr(args, name, str(default))
    if not str(raw).isdigit() or int(raw) > 1_000_000:
        flag = "--" + name.replace("_", "-")
        raise UsageError(f"{flag} must be a whole number from 0 to 1000000, not {raw!r}")
    return int(raw)


def prepare(config: ExperimentConfig) -> Experiment:
    """Check everything before anything is written; bad input becomes a `UsageError`."""
    try:
        return prepare_experiment(config)
    except ExperimentError as exc:
        raise UsageError(str(exc)) from exc


def execute(
    experiment: Experiment, *, progress: bool = True, fail_on_errors: bool = True, **options: Any
) -> int:
    """Run a prepared experiment, then print the table and write the HTML report.

    ``options`` go to `Experiment.run` (``retry_errors``, ``max_failures``,
    ``max_attempts``). A run that ends with error sessions in its store says so in one
    line and, with ``fail_on_errors``, exits with code 1.
    """
    run_dir = experiment.config.run_dir
    try:
        with reading_stores(run_dir):
            result = asyncio.run(experiment.run(progress=progress, **options))
    except ExperimentError as exc:
        raise UsageError(str(exc)) from exc
    except ProviderOutage as exc:
        print(f"rapport: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return say_stopped(run_dir)
    print(summary_line(result), file=sys.stderr)
    with reading_stores(run_dir):
        print_report(run_dir)
    if result.error_sessions:
        print(f"rapport: {errors_line(result)}", file=sys.stderr)
        return 1 if fail_on_errors else 0
    return 0


def summary_line(result: RunResult) -> str:
    """What this invocation did, in one line."""
    return (
        f"ran {result.sessions_run} sessions ({result.sessions_skipped} already done), "
        f"{result.errors} with errors, {result.model_calls} model calls "
        f"(+{result.cached_calls} cached, {result.failed_calls} failed)"
        + (f", {result.retried} error sessions retried" if result.retried else "")
    )


def errors_line(result: RunResult) -> str:
    """What a run that ends with error sessions left, and how to resume it, in one line."""
    head = f"the run ended with {result.error_sessions} error sessions"
    kept = (
        f"{result.exhausted} of them reached --max-attempts {result.max_attempts} "
        "and are kept as they are"
    )
    retry = result.error_sessions - result.exhausted
    if not retry:
        return f"{head}; {kept} (a higher --max-attempts runs them again)"
    if result.exhausted:
        return f"{head}; {kept}; run the same command again to retry the other {retry}"
    return f"{head}; run the same command again to retry them"


def print_report(run_dir: Path) -> None:
    """Print the run's table and write ``report.html`` beside it."""
    report = build_report(run_dir)
    print(render_text(report))
    print(f"report: {write_html(report)}")


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    config = config_from_args(args)
    if plan_requested(args):
        return print_plan(args, config)
    options = resume_options(args)
    named = "run_dir" in config.model_fields_set
    experiment = prepare(with_new_run_dir(config))
    return start(experiment, new_dir=not named, progress=not args.no_progress, **options)


def start(experiment: Experiment, *, new_dir: bool, progress: bool, **options: Any) -> int:
    """`execute` a run; a run in a `new_dir` (no run dir was named) says where it goes,
    and ``runs/latest`` points at it."""
    run_dir = experiment.config.run_dir
    if new_dir:
        run_dir.mkdir(parents=True, exist_ok=True)
        point_latest(run_dir)
        print(f"run dir: {run_dir}", file=sys.stderr)
    return execute(experiment, progress=progress, **options)
