"""Ctrl-C (SIGINT) and SIGTERM stop `python -m rapport` with one line and exit 130 or 143, from
the first instant its code runs: while it still imports, while it runs sessions, and when a
second signal follows the first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="reads signal dispositions from /proc"
)

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
    deadline = time.monotonic() + 60
    while not _handles_sigterm(proc.pid):
        assert proc.poll() is None and time.monotonic() < deadline, "main never started"
        time.sleep(0.001)


@pytest.mark.parametrize(
    ("signum", "after", "code"),
    [
        (signal.SIGINT, 0.0, 130),  # while the commands' modules are imported
        (signal.SIGINT, 0.5, 130),
        (signal.SIGINT, 3.0, 130),  # while sessions run
        (signal.SIGTERM, 0.0, 143),
        (signal.SIGTERM, 3.0, 143),
    ],
)
def test_a_signal_stops_the_command_with_one_line_and_its_exit_code(
    tmp_path: Path, signum: int, after: float, code: int
) -> None:
    proc = _start(tmp_path)
    _wait_for_main(proc)
    time.sleep(after)
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rapport: ") and "resume" in lines[0]
    assert ("SIGTERM" in lines[0]) == (signum == signal.SIGTERM)


@pytest.mark.parametrize("after", [0.0, 3.0])
def test_a_second_ctrl_c_exits_130_too(tmp_path: Path, after: float) -> None:
    proc = _start(tmp_path)
    _wait_for_main(proc)
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "resume" in lines[0]
