"""``rapport pack RUN_DIR``: make a run dir ready to commit (under ``results/``)."""

from __future__ import annotations

import argparse

from rapport.store import pack_run

from ._errors import UsageError, directory_path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``pack`` command."""
    parser = subparsers.add_parser(
        "pack",
        help="make a run dir's store one compact file, ready to commit",
        description="Fold the write-ahead log into run.sqlite, switch it to rollback-journal "
        "mode (readers then write nothing beside it) and vacuum it. A finished or part-done "
        "run can then be committed; running the same command on it later resumes it.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run dir")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    run_dir = directory_path("RUN_DIR", args.run_dir)
    try:
        path = pack_run(run_dir)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from exc
    print(f"packed {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0
