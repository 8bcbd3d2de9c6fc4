"""Ctrl-C (SIGINT) and SIGTERM stop `python -m rapport` with one line and exit 130 or 143, from
the first instant its code runs: while it still imports, while it runs sessions, and when a
second signal follows the first. Each signal is sent once the command reached the phase it
names (polled from /proc and the run's store), never after a fixed time."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.race,
    pytest.mark.skipif(
        not Path("/proc/self/status").exists(), reason="reads signal dispositions from /proc"
    ),
]

# A run of some minutes (50 users x 10 sessions, each agent call waits 50 ms): it is stopped.
ARGS = [
    *("run", "scripted", "--memory", "none", "--users", "50", "--sessions", "10"),
    *("--max-turns", "2", "--model", "all=scripted/echo", "--delay", "0.05", "--no-progress"),
]


def _start(tmp_path: Path) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "RAPPORT_HOME": str(tmp_path / "home"),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "rapport", *ARGS, "--run-dir", str(tmp_path / "run")],
        env=env,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # a suite started in the background inherits SIGINT ignored; the command would too
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _handles_sigterm(pid: int) -> bool:
    """Whether the process catches SIGTERM: Python never does by itself, rapport's `main`
    does from its first statement on."""
    with open(f"/proc/{pid}/status") as status:
        caught = next(line for line in status if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)))


def _wait_for_main(proc: subprocess.Popen[str]) -> None:
    _wait_until(proc, lambda: _handles_sigterm(proc.pid), "main never started")


def _stored_sessions(run_dir: Path) -> int:
    try:
        with sqlite3.connect(f"file:{run_dir / 'run.sqlite'}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
    except sqlite3.Error:  # not created yet, or its tables not yet
        return 0


PATIENCE_S = 600
"""How long a phase may take to come: only a bound on a hung test (a loaded machine can take
minutes to store a first session)."""


def _wait_until(proc: subprocess.Popen[str], ready: Callable[[], bool], what: str) -> None:
    """Poll `ready` while the command runs (`PATIENCE_S` at most)."""
    deadline = time.monotonic() + PATIENCE_S
    while not ready():
        assert proc.poll() is None and time.monotonic() < deadline, what
        time.sleep(0.001)


def _reach(proc: subprocess.Popen[str], phase: str, run_dir: Path) -> None:
    """Wait for a phase of the command: `main` (it handles signals and still imports),
    `store` (the run's store exists), `sessions` (a session is committed)."""
    _wait_for_main(proc)
    if phase == "store":
        _wait_until(proc, (run_dir / "run.sqlite").exists, "the store was never created")
    elif phase == "sessions":
        _wait_until(proc, lambda: _stored_sessions(run_dir) > 0, "no session was stored")


def _delivered(pid: int, signum: int) -> bool:
    """Whether no `signum` is pending for the process (the last one sent was delivered)."""
    with open(f"/proc/{pid}/status") as status:
        pending = [int(line.split()[1], 16) for line in status if line[:6] in ("SigPnd", "ShdPnd")]
    return not any(mask & (1 << (signum - 1)) for mask in pending)


@pytest.mark.parametrize(
    ("signum", "phase", "code"),
    [
        (signal.SIGINT, "main", 130),  # while the commands' modules are imported
        (signal.SIGINT, "store", 130),
        (signal.SIGINT, "sessions", 130),
        (signal.SIGTERM, "main", 143),
        (signal.SIGTERM, "sessions", 143),
    ],
)
def test_a_signal_stops_the_command_with_one_line_and_its_exit_code(
    tmp_path: Path, signum: int, phase: str, code: int
) -> None:
    proc = _start(tmp_path)
    _reach(proc, phase, tmp_path / "run")
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=PATIENCE_S)
    assert proc.returncode == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rapport: ") and "resume" in lines[0]
    assert ("SIGTERM" in lines[0]) == (signum == signal.SIGTERM)


@pytest.mark.parametrize("phase", ["main", "sessions"])
def test_a_second_ctrl_c_exits_130_too(tmp_path: Path, phase: str) -> None:
    proc = _start(tmp_path)
    _reach(proc, phase, tmp_path / "run")
    proc.send_signal(signal.SIGINT)
    # Two signals pending at once would be one: send the second once the first is delivered.
    deadline = time.monotonic() + PATIENCE_S
    while proc.poll() is None and not _delivered(proc.pid, signal.SIGINT):
        assert time.monotonic() < deadline, "SIGINT never delivered"
        time.sleep(0.001)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=PATIENCE_S)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "resume" in lines[0]
