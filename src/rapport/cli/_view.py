"""``rapport view RUN_DIR [--port N]``: read a run in the browser (127.0.0.1 only)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rapport.store import RUN_FILE, RunStore

from ._config import port_number
from ._errors import UsageError, directory_path, reading_stores


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``view`` command."""
    parser = subparsers.add_parser(
        "view",
        help="read a run in the browser: sessions, memory over time, side by side",
        description="Serve a local web app on 127.0.0.1 to read a run: the summary with CIs, "
        "each session turn by turn with recalled memory, enforcements, tool calls, rewards, "
        "judge scores and errors, two conditions side by side, memory over time and "
        "per-session curves. The run is only read (a read-only disk works).",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run dir")
    parser.add_argument(
        "--port",
        metavar="N",
        type=port_number,
        default=8321,
        help="port (default 8321; 0: any free)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    from rapport.view import RunData, bind, serve

    if not (directory_path("RUN_DIR", args.run_dir) / RUN_FILE).is_file():
        raise UsageError(f"no run found in {args.run_dir} (missing {RUN_FILE})")
    _check_header(args.run_dir)  # before the progress line: a bad run dir gets one line
    print(f"rapport view: reading {args.run_dir} ...", file=sys.stderr, flush=True)
    try:
        with reading_stores(Path(args.run_dir)):
            data = RunData(args.run_dir)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from exc
    try:
        sock = bind(args.port)
    except OSError as exc:
        data.close()
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from exc
    print(
        f"rapport view: http://127.0.0.1:{sock.getsockname()[1]}/ (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    try:
        serve(data, sock)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how the viewer is stopped
    finally:
        data.close()
    return 0


def _check_header(run_dir: str) -> None:
    """Refuse a run dir whose store is damaged or holds no run header.

    Raises:
        UsageError: no run in the store.
        rapport.store.StoreError: the store is damaged or not a run store.
    """
    try:
        with reading_stores(Path(run_dir)), RunStore.open_readonly(run_dir) as store:
            run = store.run_or_none()
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from exc
    if run is None:
        raise UsageError(f"no run found in {run_dir} (no run header)")
