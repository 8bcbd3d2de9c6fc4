"""``rapport export RUN_DIR --format jsonl|parquet [--per session|turn] [--out FILE]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rapport.report import export_sessions
from rapport.store import RUN_FILE

from ._errors import UsageError, directory_path, output_file, output_path, reading_stores
from ._names import Renamed


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``export`` command."""
    parser = subparsers.add_parser(
        "export",
        help="write a run's sessions (or turns) as JSON lines or Parquet, for pandas",
        description="One row per session (keys, scores, tokens per role, event counts, "
        "turns and events) or per turn (its text and the events at it). The run is only read.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run dir")
    parser.add_argument(
        "--format", choices=("jsonl", "parquet"), required=True, help="the file format"
    )
    parser.add_argument(
        "--sessions", action=Renamed, new="--format", help=argparse.SUPPRESS, nargs="?"
    )
    parser.add_argument(
        "--per", choices=("session", "turn"), default="session", help="one row per ..."
    )
    parser.add_argument(
        "--out", metavar="FILE", help="where to write (default: sessions.FORMAT in the run dir)"
    )
    parser.set_defaults(handler=handle)


def _target(run_dir: Path, args: argparse.Namespace) -> Path:
    default = f"{'sessions' if args.per == 'session' else 'turns'}.{args.format}"
    target = output_path("--out", args.out) if args.out is not None else run_dir / default
    if target.resolve() == (run_dir / RUN_FILE).resolve():
        raise UsageError(f"--out {target} would overwrite the run's store")
    return output_file("--out", target)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    run_dir = directory_path("RUN_DIR", args.run_dir)
    if not (run_dir / RUN_FILE).is_file():
        raise UsageError(f"no run found in {run_dir} (missing {RUN_FILE})")
    target = _target(run_dir, args)
    try:
        with reading_stores(run_dir):
            rows = export_sessions(run_dir, target, fmt=args.format, grain=args.per)
    except (ImportError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:  # the target is left as it was (see export_sessions)
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
    print(f"wrote {rows} {args.per} rows to {target}", file=sys.stderr)
    return 0
