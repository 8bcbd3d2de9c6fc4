"""Ctrl-C (SIGINT) and SIGTERM stop a command with one line and exit code 130 or 143.

While `rapport.cli.main` runs, the first signal raises `KeyboardInterrupt` where the program
is: a run cancels the sessions in flight and closes its store (every committed session
stays), the command prints one line and the process ends with the code. A second signal
meanwhile ends it at once with the same code: a session being committed then is rolled back
by SQLite, as when the process is killed, and the run dir's lock goes with the process.

This module imports next to nothing: `main` sets it up before anything else is imported.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path
    from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Stop:
    """The signal that stopped the command (None: none yet) and whether its line was said."""

    signum: int | None = None
    said: bool = False


_stop = _Stop()


def run_stoppable(command: Callable[[], int]) -> int:
    """Run ``command`` with SIGINT and SIGTERM handled as above; returns its exit code.

    A process that a signal stopped ends here, with that code, once its output is flushed:
    CPython keeps a note of a `KeyboardInterrupt` that passed through an extension module's
    code (one that was importing, say) and would otherwise end the process by the signal
    even though the interrupt was handled. Outside the main thread, where signals cannot be
    handled, the command just runs.
    """
    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    _stop.signum, _stop.said = None, False
    try:
        for s in _SIGNALS:
            signal.signal(s, _on_signal)
    except ValueError:  # not the main thread
        return command()
    try:
        try:
            code = command()
        except KeyboardInterrupt:
            code = say_stopped()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if _stop.signum is None else signal.SIG_IGN)
    if _stop.signum is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def exit_code() -> int:
    """128 + the signal that stopped the command: 130 for SIGINT (also for a plain
    `KeyboardInterrupt`), 143 for SIGTERM."""
    return 128 + (_stop.signum or signal.SIGINT)


def stop_line(run_dir: Path | None = None) -> str:
    """The one line a stopped command prints."""
    what = "terminated (SIGTERM)" if _stop.signum == signal.SIGTERM else "interrupted"
    if run_dir is None:
        return f"rapport: {what}; finished sessions are saved; run the same command again to resume"
    return (
        f"rapport: {what}; finished sessions are saved in {run_dir}; "
        f"resume with: rapport resume {shlex.quote(str(run_dir))}"
    )


def say_stopped(run_dir: Path | None = None) -> int:
    """Print the stop line (once, whatever signals come meanwhile); returns the exit code."""
    # A second signal waits until the line is out, then ends the process with it.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        if not _stop.said:
            print(stop_line(run_dir), file=sys.stderr, flush=True)
            _stop.said = True
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return exit_code()


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    if _stop.signum is None:
        _stop.signum = signum
        raise KeyboardInterrupt
    if not _stop.said:
        _stop.said = True
        os.write(2, (stop_line() + "\n").encode())
    os._exit(exit_code())
